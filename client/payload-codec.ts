// Encryption of every Temporal payload (workflow inputs, results, activity arguments, heartbeats)
// with AES-256-GCM, so history on the server holds only ciphertext. The key comes from
// BENCHROUTER_PAYLOAD_KEY on every worker and client; `br codec-server` lets the Web UI decode
// for those who hold it.

import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const ENCODING = 'binary/encrypted';
const CIPHER = 'aes-256-gcm';

/** Any passphrase works: the AES key is its SHA-256, and the key id a prefix of a second hash. */
export function deriveKey(secret: string): { key: Buffer; keyId: string } {
  const key = createHash('sha256').update(`benchrouter-payload-key:${secret}`).digest();
  return { key, keyId: createHash('sha256').update(key).digest('hex').slice(0, 16) };
}

export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly key: Buffer;
  private readonly keyId: string;

  constructor(secret: string) {
    ({ key: this.key, keyId: this.keyId } = deriveKey(secret));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const plain = proto.temporal.api.common.v1.Payload.encode(payload).finish();
      const iv = randomBytes(12);
      const cipher = createCipheriv(CIPHER, this.key, iv);
      const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return { metadata: { encoding: Buffer.from(ENCODING), 'encryption-key-id': Buffer.from(this.keyId) }, data };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== ENCODING) return payload;
      const keyId = Buffer.from(payload.metadata?.['encryption-key-id'] ?? []).toString();
      if (keyId !== this.keyId) throw new Error(`payload was encrypted with key ${keyId}, but BENCHROUTER_PAYLOAD_KEY gives key ${this.keyId}`);
      const data = Buffer.from(payload.data ?? []);
      const decipher = createDecipheriv(CIPHER, this.key, data.subarray(0, 12));
      decipher.setAuthTag(data.subarray(data.length - 16));
      const plain = Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
      return proto.temporal.api.common.v1.Payload.decode(plain);
    });
  }
}

/** The codecs for a process: encryption when BENCHROUTER_PAYLOAD_KEY is set, none otherwise. */
export function payloadCodecsFromEnv(env: Record<string, string | undefined> = process.env): PayloadCodec[] {
  return env.BENCHROUTER_PAYLOAD_KEY ? [new AesGcmPayloadCodec(env.BENCHROUTER_PAYLOAD_KEY)] : [];
}
