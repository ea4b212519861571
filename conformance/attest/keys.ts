/**
 * Ed25519 signing keys as PEM files: PKCS#8 for the private key, SPKI for the public one, the
 * forms openssl and every mainstream crypto library read. The keyid is the sha256 of the public
 * key's DER, so anyone holding the .pub file can recompute it.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const PRIVATE_KEY_FILE = "pulse-conform.key";
export const PUBLIC_KEY_FILE = "pulse-conform.pub";

/** A key that cannot be used, with a message fit to print as is. */
export class KeyError extends Error {
  override name = "KeyError";
}

export interface KeyPair {
  privateKeyPem: string;
  publicKeyPem: string;
  keyid: string;
}

export function keyidOf(publicKey: KeyObject): string {
  const der = publicKey.export({ type: "spki", format: "der" });
  return `sha256:${createHash("sha256").update(der).digest("hex")}`;
}

export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    keyid: keyidOf(publicKey),
  };
}

function pemLabel(pem: string, what: string): string {
  const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1];
  if (!label) throw new KeyError(`the ${what} is not a PEM file (no "-----BEGIN ...-----" line)`);
  return label;
}

function requireEd25519(key: KeyObject, what: string): KeyObject {
  if (key.asymmetricKeyType !== "ed25519") {
    throw new KeyError(`the ${what} is a ${key.asymmetricKeyType ?? "unknown"} key; pulse-conform signs with Ed25519 only (make one with pulse-conform keygen)`);
  }
  return key;
}

export function loadPrivateKey(pem: string): KeyObject {
  const label = pemLabel(pem, "private key");
  if (label.includes("PUBLIC")) throw new KeyError("the private key file holds a public key; sign with the .key file, verify with the .pub file");
  if (label.includes("ENCRYPTED")) throw new KeyError("the private key is encrypted; pulse-conform needs an unencrypted PKCS#8 key (keep it safe with file permissions instead)");
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    throw new KeyError("the private key PEM could not be read (damaged, or not a private key)");
  }
  return requireEd25519(key, "private key");
}

export function loadPublicKey(pem: string): KeyObject {
  const label = pemLabel(pem, "public key");
  // createPublicKey would quietly derive a public key from a private one; refusing keeps private
  // keys off the machines that only verify.
  if (label.includes("PRIVATE")) throw new KeyError("the public key file holds a private key; verify with the .pub file and keep the .key file secret");
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch {
    throw new KeyError("the public key PEM could not be read (damaged, or not a public key)");
  }
  return requireEd25519(key, "public key");
}

/**
 * `pulse-conform keygen --out DIR`: writes both files, the private one readable by its owner
 * only, creating DIR (and its parents) first, as `--out keys/` in a fresh checkout expects.
 * Never overwrites ("wx"), since replacing a key silently would orphan every attestation made
 * with it. Throws KeyError when a file exists.
 */
export function writeKeyPair(dir: string, pair: KeyPair = generateKeyPair()): { privateKeyPath: string; publicKeyPath: string; keyid: string } {
  const privateKeyPath = join(dir, PRIVATE_KEY_FILE);
  const publicKeyPath = join(dir, PUBLIC_KEY_FILE);
  const write = (path: string, text: string, mode: number): void => {
    try {
      writeFileSync(path, text, { mode, flag: "wx" });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") throw new KeyError(`${path} already exists; remove it or choose another --out directory`);
      throw e;
    }
  };
  // Checked up front too, so an existing .pub does not leave a fresh .key behind.
  for (const path of [privateKeyPath, publicKeyPath]) {
    if (existsSync(path)) throw new KeyError(`${path} already exists; remove it or choose another --out directory`);
  }
  mkdirSync(dir, { recursive: true });
  write(privateKeyPath, pair.privateKeyPem, 0o600);
  write(publicKeyPath, pair.publicKeyPem, 0o644);
  return { privateKeyPath, publicKeyPath, keyid: pair.keyid };
}
