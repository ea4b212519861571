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

export function badgeOf(report: ConformanceReport): Badge {
  return {
    schemaVersion: 1,
    label: protocolLabel(report.pulse_version),
    message: `${report.verdict} ${passedCount(report.summary)}/${SPEC_TESTS.length}`,
    color: COLOR[report.verdict],
  };
}
