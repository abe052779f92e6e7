import argon2 from 'argon2';

/**
 * argon2id with the OWASP minimum profile (19 MiB, 2 passes, 1 lane): memory-hard, and about
 * 50 ms here, so a Basic login stays affordable while offline guessing stays expensive.
 */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
}

export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (!hash) {
    // Spend the same time on unknown users, so response time does not reveal which names exist.
    await argon2.hash(password, OPTIONS);
    return false;
  }
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}
