/** `pulse-conform keygen` and `pulse-conform verify`: the attestation's two ends. */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { CONFORM_EXIT } from "../../conformance/report/summary.js";
import { UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";

export async function runKeygen(opts: { out?: string }, io: CliIO): Promise<number> {
  const { writeKeyPair, KeyError } = await import("../../conformance/attest/index.js");
  try {
    const written = writeKeyPair(resolve(io.cwd, opts.out ?? "."));
    io.stdout(`private key ${written.privateKeyPath} (mode 0600: keep it secret)\npublic key  ${written.publicKeyPath}\nkeyid       ${written.keyid}\n`);
    return 0;
  } catch (e) {
    if (e instanceof KeyError) throw new UsageError(e.message);
    const code = (e as NodeJS.ErrnoException).code;
    // --out names a file, or a directory we may not write: say which, in one line.
    if (code === "ENOENT" || code === "EACCES" || code === "EPERM" || code === "ENOTDIR" || code === "EEXIST" || code === "EROFS") {
      throw new UsageError(`cannot write the keys in ${opts.out ?? "."}: ${code === "ENOTDIR" || code === "EEXIST" ? "not a directory" : code === "ENOENT" ? "no such directory" : code === "EROFS" ? "read-only file system" : "permission denied"}`);
    }
    throw e;
  }
}

export interface VerifyCliOptions {
  report?: string;
  key?: string;
  runtimeDigest?: string;
  allowUncertified?: boolean;
  requireKeyid?: boolean;
  verdict?: string;
  suiteVersion?: string;
}

export async function runVerify(envelopeFile: string, opts: VerifyCliOptions, io: CliIO): Promise<number> {
  if (opts.key === undefined) throw new UsageError("verify needs --key (the public key, pulse-conform.pub)");
  // A malformed digest is a mistake in the command, not a runtime that failed verification.
  if (opts.runtimeDigest !== undefined && !/^sha256:[0-9a-fA-F]{64}$/.test(opts.runtimeDigest)) {
    throw new UsageError(`--runtime-digest takes "sha256:" and 64 hex digits, got "${opts.runtimeDigest}"`);
  }
  if (opts.verdict !== undefined && !["conformant", "nonconformant", "incomplete"].includes(opts.verdict)) throw new UsageError(`--verdict is conformant, nonconformant or incomplete, got "${opts.verdict}"`);
  const read = async (file: string, what: string) => {
    try {
      return await readFile(resolve(io.cwd, file));
    } catch (e) {
      throw new UsageError(`cannot read the ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };
  const envelopeBytes = await read(envelopeFile, "attestation");
  let envelope: unknown;
  try {
    envelope = JSON.parse(envelopeBytes.toString("utf8"));
  } catch {
    io.stderr(`pulse-conform verify: ${envelopeFile} is not JSON: not a DSSE envelope\nverification FAILED\n`);
    return CONFORM_EXIT.verification;
  }
  const publicKeyPem = (await read(opts.key, "public key")).toString("utf8");
  const reportBytes = opts.report !== undefined ? await read(opts.report, "report") : undefined;
  const { verifyAttestation } = await import("../../conformance/attest/index.js");
  const result = verifyAttestation({
    envelope,
    publicKeyPem,
    ...(reportBytes ? { reportBytes } : {}),
    ...(opts.runtimeDigest ? { runtimeDigest: opts.runtimeDigest } : {}),
    policy: {
      ...(opts.verdict ? { verdict: opts.verdict as "conformant" } : {}),
      ...(opts.suiteVersion ? { suiteVersion: opts.suiteVersion } : {}),
      requireCertification: opts.allowUncertified !== true,
      ...(opts.requireKeyid ? { requireKeyid: true } : {}),
    },
  });
  if (!result.ok) {
    io.stderr(`pulse-conform verify: ${envelopeFile}:\n${result.failures.map((f) => `  ✗ ${f}`).join("\n")}\nverification FAILED\n`);
    return CONFORM_EXIT.verification;
  }
  const p = result.statement!.predicate;
  const claim = result.acceptedFiltered
    ? `passed the ${p.test_results.length === 1 ? "test" : `${p.test_results.length} tests`} it ran (${p.test_results.map((r) => r.number).join(", ")}: a filtered run, not a certification)`
    : `is ${p.verdict}`;
  const held = ["signature", ...(opts.requireKeyid ? ["keyid"] : []), ...(reportBytes ? ["report digest"] : []), ...(opts.runtimeDigest ? ["runtime digest"] : []), "policy"];
  io.stdout(`verified: ${p.runtime_name} ${p.runtime_version} ${claim} (suite ${p.suite_version}); ${held.slice(0, -1).join(", ")} and ${held.at(-1)} hold\n`);
  if (!reportBytes) io.stdout("note: without --report, the report file itself was not checked against the signed digest\n");
  return 0;
}
