/**
 * A shields.io endpoint badge (https://shields.io/badges/endpoint-badge): publish the JSON and
 * point a badge at it. The count is of the twelve spec tests, so a partial run shows as partial.
 */
import { passedCount } from "./summary.js";
import { SPEC_TESTS, type ConformanceReport, type Verdict } from "./types.js";

export interface Badge {
  schemaVersion: 1;
  label: string;
  message: string;
  color: "brightgreen" | "red" | "yellow";
}

const COLOR: Record<Verdict, Badge["color"]> = { conformant: "brightgreen", nonconformant: "red", incomplete: "yellow" };

/** "0.1.2" → "v0.1": the badge names the protocol version, not the patch. */
function protocolLabel(pulseVersion: string): string {
  const [major, minor] = pulseVersion.split(".");
  return `PULSE v${major ?? pulseVersion}${minor === undefined ? "" : `.${minor}`}`;
}

/** A loop report counts the tests that applied to the loop: "conformant 9/9 applicable". */
export function badgeOf(report: ConformanceReport): Badge {
  const outOf = report.loop ? `${report.loop.applied.length} applicable` : String(SPEC_TESTS.length);
  return {
    schemaVersion: 1,
    label: `${protocolLabel(report.pulse_version)}${report.loop ? " loop" : ""}`,
    message: `${report.verdict} ${passedCount(report.summary)}/${outOf}`,
    color: COLOR[report.verdict],
  };
}
