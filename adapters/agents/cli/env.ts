/**
 * The environment an agent process gets: an allowlist, never the whole of pulse's. An API key
 * or a nesting marker (CLAUDECODE) inherited by accident makes an agent talk to the wrong
 * account or refuse to start; so only these names pass, plus the preset's own pass-through
 * keys and the ones the user names.
 */

/** Names every agent gets when pulse has them: what a shell, git and TLS need. */
export const BASE_ENV_ALLOWLIST = [
  "PATH",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TMPDIR",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
] as const;

/** Home and config folders: passed from pulse, or replaced by a private one for the run. */
export const HOME_VARS = ["HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"] as const;

export interface EnvPlan {
  /** pulse's own environment. */
  parent: Readonly<Record<string, string | undefined>>;
  /** Extra names to take from the parent (the preset's and the user's pass-through keys). */
  passThrough: readonly string[];
  /** Set outright, last (preset env, endpoint env, request env). */
  set: Readonly<Record<string, string>>;
  /** A private home for the run; when absent, HOME and XDG_* pass from the parent. */
  privateHome?: string;
  cwd: string;
}

export function buildEnv(plan: EnvPlan): Record<string, string> {
  const env: Record<string, string> = {};
  const take = (name: string) => {
    const v = plan.parent[name];
    if (v !== undefined) env[name] = v;
  };
  for (const name of BASE_ENV_ALLOWLIST) take(name);
  if (plan.privateHome) {
    const h = plan.privateHome;
    Object.assign(env, { HOME: h, XDG_CONFIG_HOME: `${h}/.config`, XDG_DATA_HOME: `${h}/.local/share`, XDG_CACHE_HOME: `${h}/.cache`, XDG_STATE_HOME: `${h}/.local/state` });
  } else {
    for (const name of HOME_VARS) take(name);
  }
  for (const name of plan.passThrough) take(name);
  // Agents print for a parser, not a terminal; opencode resolves paths against $PWD, not its cwd.
  Object.assign(env, { NO_COLOR: "1", TERM: "dumb", PWD: plan.cwd });
  Object.assign(env, plan.set);
  return env;
}

/** Names a variable may have: a letter or underscore, then letters, digits, underscores. */
export function isEnvName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}
