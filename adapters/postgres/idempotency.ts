/**
 * Idempotency claims (§5.2) across hosts: `INSERT … ON CONFLICT DO NOTHING RETURNING` hands a
 * (workspace, signature) to exactly one transaction, whichever host it runs on, so two hosts that
 * race on the same phase run its side effect once. The loser reads the winner's output once that
 * commits.
 */
import type pg from "pg";

export interface Claim {
  workspace_id: string;
  signature: string;
  output: string;
  loop_id: string;
  phase_id: string;
  trace_id: string;
  created_at: string;
}

/** True when this transaction claimed the signature; false when another already had. */
export async function claimSignature(client: pg.ClientBase, table: string, c: Claim): Promise<boolean> {
  const r = await client.query(
    `INSERT INTO ${table} (workspace_id, signature, output, loop_id, phase_id, trace_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING signature`,
    [c.workspace_id, c.signature, c.output, c.loop_id, c.phase_id, c.trace_id, c.created_at],
  );
  return r.rowCount === 1;
}
