/**
 * The vault's cryptography (docs/vault.md, "The browser module's face"): WebCrypto and hash-wasm's
 * Argon2id only, no DOM and no Node APIs, so the Files page, the public link page and the Node tests
 * run the same code.
 */
export { VaultError, type VaultErrorCode } from './errors';
export { defaultKdf, type KdfParams } from './kdf';
export { createVault, unlockVault, unlockWithRecovery, rewrapPrivateKey, type VaultRecord, type VaultKeys } from './vault-keys';
export { newFolderKey, folderKeyFrom, wrapFolderKey, unwrapFolderKey, FolderKeyring, type FolderKey } from './folder-keys';
export { encryptName, decryptName, isEncryptedName } from './names';
export { cipherSize, paddedSize, HEADER_BYTES } from './padding';
export { encryptBlob, resumeBlob, type EncryptedBlob } from './encrypt';
export { plainSizeOf, SIZE_HEAD_BYTES } from './plain-size';
export { decryptStream, decryptBlob, contentKeyOf, type ContentKeySource } from './decrypt';
export { linkFragment, parseLinkFragment } from './links';
export { b64u, fromB64u } from './bytes';
