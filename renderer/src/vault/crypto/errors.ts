/** The one error type of the vault's cryptography; `code` is what the UI branches on and translates. */
export type VaultErrorCode = 'wrong_passphrase' | 'bad_recovery_key' | 'wrong_key' | 'integrity' | 'name_too_long' | 'bad_link_key' | 'not_encrypted';

const messages: Record<VaultErrorCode, string> = {
  wrong_passphrase: 'The vault passphrase is wrong',
  bad_recovery_key: 'The recovery key is wrong or incomplete',
  wrong_key: 'This key does not open this folder',
  integrity: 'The encrypted data failed its integrity check',
  name_too_long: 'Names in encrypted folders can be at most 129 bytes',
  bad_link_key: "This link's key is incomplete",
  not_encrypted: 'This is not encrypted data',
};

export class VaultError extends Error {
  readonly code: VaultErrorCode;
  constructor(code: VaultErrorCode, message = messages[code]) {
    super(message);
    this.name = 'VaultError';
    this.code = code;
  }
}

/** Runs `work`; any failure (a GCM tag, a malformed key WebCrypto refuses) becomes `VaultError(code)`. */
export async function orFail<T>(code: VaultErrorCode, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw e instanceof VaultError ? e : new VaultError(code);
  }
}
