/**
 * Turning the network off for an action without privileges: a new network namespace
 * (`unshare -rn`: an unprivileged user namespace, then a network namespace with only a downed
 * loopback) where the kernel allows it, probed once; otherwise only Node code is kept off the
 * network, by the guard module preloaded into it.
 */
import { spawnSync } from "node:child_process";

let probed: boolean | undefined;

/** Whether `unshare -rn` works here (unprivileged user namespaces enabled, unshare installed). */
export function namespacesAvailable(): boolean {
  if (probed === undefined) {
    const r = spawnSync("unshare", ["-rn", "true"], { stdio: "ignore", timeout: 5000 });
    probed = r.status === 0;
  }
  return probed;
}

/** For tests: pretend the probe answered `value` (undefined: probe again). */
export function setNamespacesAvailable(value: boolean | undefined): void {
  probed = value;
}
