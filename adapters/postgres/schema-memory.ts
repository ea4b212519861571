/**
 * Version 5 of the PostgreSQL store's schema: memory graphs that several hosts of a fleet write
 * (two loops sharing `memory://…` whose leases landed on different hosts). Before it, each host
 * handed out node_N and mem_evt_N from its own counter and upserted its rows, so the last writer
 * silently replaced the other's committed nodes and mutation records.
 *
 *   reserve_memory_ids  a block of ids (node, edge, event, created) for one writer alone, taken
 *                       from the graph's counters row under its row lock: two hosts never hand
 *                       out the same id
 *   commit_units        version 4's, with memory rows written by what the writer saw (store-unit.ts
 *                       checkOf): a new row never replaces another writer's, a changed or deleted
 *                       row only the one the writer read, the counters only move forward; any
 *                       other row aborts the batch (PU004), which the host reports and then reads
 *                       the graph again; the counters row's stamp, left by each commit, tells a
 *                       writer whether another committed since it read the graph
 *   memory_same         two row values equal, a node's revision aside (a host that reloaded a
 *                       graph counts revisions from 1 again)
 *   memory_merge        two JSON objects merged, numbers by their maximum, anything else `b`'s
 */
import type { PostgresAddress } from "./address.js";

/** The memory part of version 3's commit_units, which version 5 replaces (v4 kept it as is). */
function v3Memory(ms: string): string {
  return `  IF p ? 'forget' THEN
    FOR r IN SELECT * FROM jsonb_to_recordset(p->'forget') AS x(graph text, kind text, key text) LOOP
      DELETE FROM ${ms} WHERE graph = r.graph AND workspace_id = p_ws AND kind = r.kind AND key = r.key;
    END LOOP;
  END IF;
  IF p ? 'memory' THEN
    INSERT INTO ${ms} (graph, workspace_id, kind, key, value)
      SELECT x.graph, p_ws, x.kind, x.key, x.value FROM jsonb_to_recordset(p->'memory') AS x(n int, graph text, kind text, key text, value text) ORDER BY x.n
      ON CONFLICT (graph, workspace_id, kind, key) DO UPDATE SET value = EXCLUDED.value;
  END IF;
`;
}

function checkedMemory(s: string): string {
  const ms = `"${s}".memory_state`;
  const row = `graph = r.graph AND workspace_id = p_ws AND kind = r.kind AND key = r.key`;
  const refuse = `    IF NOT v_ok THEN
      RAISE EXCEPTION 'memory graph % of workspace %: its % row % was changed by another writer (another host of the fleet) since this host read it: this unit is not committed, so that write is not replaced; this host reads the graph again', r.graph, p_ws, r.kind, r.key USING ERRCODE = 'PU004';
    END IF;`;
  return `  IF p ? 'forget' THEN
    FOR r IN SELECT * FROM jsonb_to_recordset(p->'forget') AS x(graph text, kind text, key text, mode text, prev text) LOOP
      IF r.mode = 'new' THEN
        -- written and deleted within the batch: no other writer's row may have appeared meanwhile
        v_ok := NOT EXISTS (SELECT 1 FROM ${ms} WHERE ${row});
      ELSE
        DELETE FROM ${ms} WHERE ${row} AND (r.mode IS DISTINCT FROM 'same' OR "${s}".memory_same(value, r.prev));
        v_ok := FOUND OR r.mode IS DISTINCT FROM 'same';
      END IF;
${refuse}
    END LOOP;
  END IF;
  IF p ? 'memory' THEN
    FOR r IN SELECT * FROM jsonb_to_recordset(p->'memory') AS x(n int, graph text, kind text, key text, value text, mode text, prev text) ORDER BY x.n LOOP
      IF r.mode = 'max' THEN
        INSERT INTO ${ms} AS m (graph, workspace_id, kind, key, value) VALUES (r.graph, p_ws, r.kind, r.key, r.value)
          ON CONFLICT (graph, workspace_id, kind, key) DO UPDATE SET value = CASE
            WHEN coalesce(m.value::jsonb->>'stamp', '') = coalesce(r.prev, '') THEN "${s}".memory_merge(m.value, EXCLUDED.value)
            -- another writer committed since this one read the graph: a stamp this writer does
            -- not know, so that its next transaction reads the graph again
            ELSE ("${s}".memory_merge(m.value, EXCLUDED.value)::jsonb || jsonb_build_object('stamp', (EXCLUDED.value::jsonb->>'stamp') || '+'))::text END;
        v_ok := true;
      ELSIF r.mode = 'new' THEN
        INSERT INTO ${ms} AS m (graph, workspace_id, kind, key, value) VALUES (r.graph, p_ws, r.kind, r.key, r.value)
          ON CONFLICT (graph, workspace_id, kind, key) DO UPDATE SET value = EXCLUDED.value WHERE "${s}".memory_same(m.value, EXCLUDED.value);
        v_ok := FOUND;
      ELSIF r.mode = 'same' THEN
        UPDATE ${ms} SET value = r.value WHERE ${row} AND "${s}".memory_same(value, r.prev);
        v_ok := FOUND;
      ELSE
        INSERT INTO ${ms} (graph, workspace_id, kind, key, value) VALUES (r.graph, p_ws, r.kind, r.key, r.value)
          ON CONFLICT (graph, workspace_id, kind, key) DO UPDATE SET value = EXCLUDED.value;
        v_ok := true;
      END IF;
${refuse}
    END LOOP;
  END IF;
`;
}

/** Version 5, from version 4's commit_units (its SQL, as schema.ts builds it). */
export function v5(s: string, a: PostgresAddress, v4CommitUnits: string): string {
  const q = (name: string) => `"${s}".${name}`;
  const ms = q("memory_state");
  const before = v3Memory(ms);
  if (!v4CommitUnits.includes(before)) throw new Error("schema-memory.ts: version 4's commit_units changed; version 5 must follow it");
  const body = v4CommitUnits.replace(before, () => checkedMemory(s)).replace("  v_tick jsonb;\n", "  v_tick jsonb;\n  v_ok boolean;\n");
  const ids = ["node", "edge", "event", "created"].map((k) => `'${k}', (v_from->>'${k}')::bigint + p_size`).join(", ");
  return `
CREATE FUNCTION ${q("memory_same")}(a text, b text) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN a IS NULL OR b IS NULL THEN a IS NULL AND b IS NULL
    WHEN jsonb_typeof(a::jsonb) = 'object' AND jsonb_typeof(b::jsonb) = 'object' THEN (a::jsonb - 'rev') = (b::jsonb - 'rev')
    ELSE a::jsonb = b::jsonb END
$$;

CREATE FUNCTION ${q("memory_merge")}(a text, b text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_object_agg(k, CASE WHEN jsonb_typeof(a::jsonb -> k) = 'number' AND jsonb_typeof(b::jsonb -> k) = 'number'
    THEN to_jsonb(greatest((a::jsonb ->> k)::numeric, (b::jsonb ->> k)::numeric)) ELSE coalesce(b::jsonb -> k, a::jsonb -> k) END)::text
  FROM (SELECT jsonb_object_keys(coalesce(a, '{}')::jsonb) UNION SELECT jsonb_object_keys(coalesce(b, '{}')::jsonb)) AS keys(k)
$$;

CREATE FUNCTION ${q("reserve_memory_ids")}(p_ws text, p_graph text, p_local text, p_size bigint) RETURNS text LANGUAGE plpgsql SECURITY INVOKER AS $$
DECLARE
  v text;
  v_from jsonb;
BEGIN
  PERFORM set_config('pulse.workspace', p_ws, true);
  INSERT INTO ${q("workspaces")} (workspace_id) VALUES (p_ws) ON CONFLICT DO NOTHING;
  -- The row first (so that two first reservations queue on its lock), then its lock.
  INSERT INTO ${ms} (graph, workspace_id, kind, key, value) VALUES (p_graph, p_ws, 'counters', '', p_local) ON CONFLICT DO NOTHING;
  SELECT value INTO v FROM ${ms} WHERE graph = p_graph AND workspace_id = p_ws AND kind = 'counters' AND key = '' FOR UPDATE;
  v_from := ${q("memory_merge")}(v, p_local)::jsonb;
  UPDATE ${ms} SET value = (v_from || jsonb_build_object(${ids}))::text WHERE graph = p_graph AND workspace_id = p_ws AND kind = 'counters' AND key = '';
  RETURN v_from::text;
END $$;

${body}

REVOKE ALL ON FUNCTION ${q("memory_same")}(text, text), ${q("memory_merge")}(text, text), ${q("reserve_memory_ids")}(text, text, text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ${q("memory_same")}(text, text), ${q("memory_merge")}(text, text), ${q("reserve_memory_ids")}(text, text, text, bigint) TO "${a.appRole}";
`;
}
