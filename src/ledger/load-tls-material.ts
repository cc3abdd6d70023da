import { readFile } from 'node:fs/promises';
import type { TlsOptions } from './ledger-connection.js';
import { LedgerUsageError } from './ledger-usage-error.js';

/** The PEM material of `TlsOptions`, read from disk. */
export type TlsMaterial = {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly rejectUnauthorized: boolean;
};

/** Reads the CA, certificate and key files once; shared by the HTTP client and the streams. */
export async function loadTlsMaterial(tls: TlsOptions): Promise<TlsMaterial> {
  const read = async (file: string | undefined, what: string): Promise<Buffer | undefined> => {
    if (file === undefined) return undefined;
    try {
      return await readFile(file);
    } catch (err) {
      throw new LedgerUsageError(
        `Cannot read the TLS ${what} file ${file}: check the tls settings of the ledger connection.`,
        { cause: err },
      );
    }
  };
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    throw new LedgerUsageError(
      'TLS certFile and keyFile go together: set both for mutual TLS, or neither.',
    );
  }
  const [ca, cert, key] = await Promise.all([
    read(tls.caFile, 'CA'),
    read(tls.certFile, 'certificate'),
    read(tls.keyFile, 'key'),
  ]);
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    rejectUnauthorized: tls.rejectUnauthorized ?? true,
  };
}
