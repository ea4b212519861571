#!/usr/bin/env node
import { Command, Option } from "commander";
import { CONFORM_HELP, runConform, type ConformCliOptions } from "./conform-command.js";
import { runProgram, setExitCode } from "./main.js";
import { processIO } from "./io.js";
import { VERSION } from "../version.js";
import { UsageError } from "./exit-codes.js";

const io = processIO("pulse-conform", 4);
const collect = (value: string, previous: string[]) => [...previous, value];

// `pulse-conform [options] -- ./acme-adapter --its-flags`: everything after the first `--` is the
// adapter's command, word for word, and never reaches commander (which would parse its flags).
const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const adapter = split >= 0 ? argv.slice(split + 1) : undefined;
const withAdapter = (opts: ConformCliOptions): ConformCliOptions => (adapter !== undefined ? { ...opts, adapter } : opts);
const noAdapter = (command: string) => {
  if (adapter !== undefined) throw new UsageError(`${command} runs no adapter: nothing goes after --`);
};

function addDriverOptions(cmd: Command): Command {
  return cmd
    .option("--driver <command>", "run an adapter as a subprocess speaking the driver protocol on stdio")
    .option("--attach <url>", "drive an adapter that is already running, over HTTP")
    .option("--max-response-bytes <n>", "largest answer read from an --attach adapter (default 67108864, 64 MiB)")
    .addOption(new Option("--timing <mode>", "virtual clock when the runtime has one, or real time").choices(["virtual", "real"]))
    .addOption(new Option("--evidence <class>", "observe substrates through the harness's recording substrate, or through the driver").choices(["recording", "driver"]))
    .option("--validate-protocol", "check every driver message both ways against schema/conformance/driver")
    .option("--no-color", "disable colour");
}

const program = addDriverOptions(new Command("pulse-conform"))
  .description("Certify a PULSE runtime against the twelve conformance tests of spec §12, with a signed report; or, with --loop, certify a loop on pulse's runtime.")
  .version(VERSION, "-V, --version")
  .usage("[options] [command] [-- <adapter command>...]")
  // Subcommands (verify) have options of the same names (--report, --key) that mean other files.
  .enablePositionalOptions()
  .option("--report <file>", "write the report JSON (docs/conformance/report.md)")
  .option("--attest <file>", "write a DSSE-signed in-toto attestation of the report (needs --key and --report)")
  .option("--key <file>", "Ed25519 private key for --attest (pulse-conform keygen)")
  .option("--junit <file>", "write JUnit XML")
  .option("--markdown <file>", "write a Markdown summary")
  .option("--badge <file>", "write a shields.io endpoint badge JSON")
  .option("--repeat <n>", "run each test n times; disagreeing runs are reported flaky")
  .option("--seed <n>", "seed recorded in the report and repro lines", "1")
  .option("--only <numbers>", "run only these tests, e.g. 1,7 (the report is then not a certification)")
  .option("--runtime-digest <sha256>", "the runtime artifact's sha256 when the adapter reports none (needed for --attest then)")
  .option("--manifest <path>", "also certify that these manifests load (test 12); repeatable", collect, [])
  .option("--loop <manifest>", "certify a loop instead: the tests that apply to it, on pulse's runtime with its handlers")
  .option("--handlers <module>", "with --loop: an ES module of phase handlers (default: pulse's recording handlers)")
  .option("--with <path>", "with --loop: manifests of the loops it names (default: its own directory); repeatable", collect, [])
  .option("--input <json>", "with --loop: the input of the iterations the tests start (default {})")
  .addHelpText("after", CONFORM_HELP)
  .action(async (opts: ConformCliOptions, cmd: Command) => {
    if (cmd.args.length > 0) {
      const names = cmd.commands.map((c) => c.name()).join(", ");
      throw new UsageError(`unknown command '${cmd.args[0]}' (the commands are ${names}); an adapter to certify goes after --: pulse-conform -- ${cmd.args.join(" ")}`);
    }
    const options = withAdapter(opts) as import("./conform-loop.js").ConformLoopOptions;
    if (options.loop !== undefined) {
      const { runConformLoop } = await import("./conform-loop.js");
      setExitCode(cmd, await runConformLoop(options, io));
      return;
    }
    for (const [flag, value] of [["--handlers", options.handlers], ["--with", options.with?.length ? options.with : undefined], ["--input", options.input]] as const) {
      if (value !== undefined) throw new UsageError(`${flag} goes with --loop (certifying a loop), not with a runtime's certification`);
    }
    setExitCode(cmd, await runConform(options, io));
  });

addDriverOptions(program.command("selftest"))
  .description("prove the suite can fail: the runtime passes 12/12 and each of 12 mutants fails exactly its test")
  .action(async (opts: ConformCliOptions, cmd: Command) => {
    const { runSelftest } = await import("./conform-selftest.js");
    setExitCode(cmd, await runSelftest(withAdapter(opts), io));
  });

program
  .command("keygen")
  .description("make an Ed25519 key pair for attestations (pulse-conform.key, mode 0600, and pulse-conform.pub)")
  .option("--out <dir>", "directory to write the keys in", ".")
  .action(async (opts: { out?: string }, cmd: Command) => {
    noAdapter("keygen");
    const { runKeygen } = await import("./conform-keys.js");
    setExitCode(cmd, await runKeygen(opts, io));
  });

program
  .command("verify <attestation>")
  .description("check an attestation: signature, the report's digest, the runtime digest and a policy")
  .option("--report <file>", "the report the attestation signs (its sha256 must match)")
  .option("--key <file>", "the signer's public key (pulse-conform.pub)")
  .option("--runtime-digest <sha256>", "require this runtime artifact digest (sha256:<hex>)")
  .option("--verdict <verdict>", "required verdict (default conformant)")
  .option("--suite-version <version>", "required suite version")
  .option("--allow-uncertified", "accept a filtered run (certification false) whose every test that ran passed")
  .option("--require-keyid", "the signature that verifies must name the key's keyid (an unsigned hint otherwise ignored)")
  .action(async (file: string, opts: import("./conform-keys.js").VerifyCliOptions, cmd: Command) => {
    noAdapter("verify");
    const { runVerify } = await import("./conform-keys.js");
    setExitCode(cmd, await runVerify(file, opts, io));
  });

// Operands reach the action, which names an unknown command, rather than "too many arguments".
// Set after the subcommands exist: they copy the setting when created, and must keep refusing.
program.allowExcessArguments(true);

process.exitCode = await runProgram(program, split >= 0 ? argv.slice(0, split) : argv, io, "pulse-conform", { usage: 4, internal: 3 });
