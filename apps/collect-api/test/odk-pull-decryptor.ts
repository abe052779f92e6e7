/**
 * A decryptor of ODK envelopes for the tests, written with node:crypto from ODK Briefcase's
 * description of the format (RSA-OAEP SHA-256/MGF1-SHA-256 key, MD5(instanceID, key) IV seed
 * bumped one byte per file, AES-256-CFB with PKCS#5 padding): it shares no code with the
 * product's decryptor, so what it opens proves the pulled bytes are the phone's.
 */
import { constants, createDecipheriv, createHash, privateDecrypt } from 'node:crypto';

const tag = (xml: string, name: string) => new RegExp(`<(?:\\w+:)?${name}[^>]*>([^<]*)</(?:\\w+:)?${name}>`).exec(xml)?.[1]?.trim();

export function openEnvelope(manifestXml: string, files: ReadonlyMap<string, Buffer>, privateKeyPem: string): { xml: string; media: Map<string, Buffer> } {
  const key = privateDecrypt({ key: privateKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(tag(manifestXml, 'base64EncryptedKey')!, 'base64'));
  const instanceId = tag(manifestXml, 'instanceID') ?? /instanceID="([^"]+)"/.exec(manifestXml)![1]!;
  const seed = createHash('md5').update(instanceId, 'utf8').update(key).digest();
  // Enketo's manifests write <file type="file">.
  const mediaNames = [...manifestXml.matchAll(/<(?:\w+:)?file(?:\s[^>]*)?>([^<]+)<\/(?:\w+:)?file>/g)].map((m) => m[1]!.trim());
  const xmlName = tag(manifestXml, 'encryptedXmlFile')!;
  const media = new Map<string, Buffer>();
  let xml = '';
  [...mediaNames, xmlName].forEach((name, i) => {
    seed[i % 16] = (seed[i % 16]! + 1) & 0xff;
    const decipher = createDecipheriv('aes-256-cfb', key, Buffer.from(seed));
    const padded = Buffer.concat([decipher.update(files.get(name)!), decipher.final()]);
    const plain = padded.subarray(0, padded.length - padded[padded.length - 1]!);
    if (name === xmlName) xml = plain.toString('utf8');
    else media.set(name.replace(/\.enc$/, ''), plain);
  });
  return { xml, media };
}
