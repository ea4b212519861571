/** What the pulse-conform CLI needs to make and check attestations. */
export { decodeBase64, pae, signEnvelope, verifyEnvelope, type DsseEnvelope, type DsseSignature, type EnvelopeCheck } from "./dsse.js";
export {
  KeyError,
  PRIVATE_KEY_FILE,
  PUBLIC_KEY_FILE,
  generateKeyPair,
  keyidOf,
  loadPrivateKey,
  loadPublicKey,
  writeKeyPair,
  type KeyPair,
} from "./keys.js";
export {
  PAYLOAD_TYPE,
  PREDICATE_TYPE,
  REPORT_SUBJECT,
  STATEMENT_TYPE,
  attestReport,
  buildStatement,
  predicateOf,
  reportDisagreements,
  sha256Hex,
  sha256Of,
  type ConformancePredicate,
  type ConformanceStatement,
  type Subject,
} from "./statement.js";
export { verifyAttestation, type VerifyOptions, type VerifyPolicy, type VerifyResult } from "./verify.js";
