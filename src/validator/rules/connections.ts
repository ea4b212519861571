/** §3.5, §10: connection ids are unique and backpressure settings make sense together. */
import { asString } from "../access.js";
import type { LoopModel } from "../resolver.js";
import type { Report } from "../finding.js";

export function checkConnections(model: LoopModel, report: Report): void {
  // Only a list of two or more can hold a duplicate.
  const seen = model.connections.length > 1 ? new Map<string, number>() : undefined;
  for (const { item, index } of model.connections) {
    const id = asString(item.id);
    if (id !== undefined && seen) {
      const first = seen.get(id);
      if (first !== undefined) {
        report({ rule: "pulse/duplicate-connection-id", path: ["connections", index, "id"], message: `connection id "${id}" is already used by connections[${first}]` });
      } else {
        seen.set(id, index);
      }
    }
    if (item.overflow_policy !== undefined && item.max_inflight === undefined) {
      report({
        rule: "pulse/overflow-without-limit",
        path: ["connections", index, "overflow_policy"],
        key: true,
        message: "overflow_policy never applies without max_inflight: the connection has no in-flight limit to overflow (§10.3)",
      });
    }
  }
}
