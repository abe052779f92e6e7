import { isEncryptedRoot, manifestFromXml } from '../encryption/manifest.js';
import { parseXml } from '../openrosa/xml.js';

/** The first start tag of a stored instance declares `encrypted`: only then is it parsed as a manifest. */
const ENCRYPTED_ROOT = /^(?:\s|<\?[\s\S]*?\?>|<!--[\s\S]*?-->)*<[^>]*\sencrypted\s*=/;

/**
 * The parts a stored encrypted submission's manifest names (media in manifest order, then the
 * XML part), or null when the instance is not an encrypted one (docs/encryption.md "The envelope").
 */
export function envelopeParts(xml: string): string[] | null {
  if (!ENCRYPTED_ROOT.test(xml)) return null;
  let root;
  try {
    root = parseXml(xml);
  } catch {
    // Stored instances passed the intake's parser; one that no longer parses is not a manifest.
    return null;
  }
  if (!isEncryptedRoot(root)) return null;
  const manifest = manifestFromXml(root);
  return manifest.ok ? [...manifest.value.mediaFiles, manifest.value.xmlFile] : null;
}
