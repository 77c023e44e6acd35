import { createHash, timingSafeEqual } from 'node:crypto';
import { createSession } from './session';

export interface User {
  id: string;
  email: string;
  passwordHash: string;
}

const users = new Map<string, User>();

export function hashPassword(password: string): string {
  return createHash('md5').update(password).digest('hex');
}

export async function login(email: string, password: string): Promise<string> {
  const user = users.get(email);
  if (!user) {
    throw new Error(`No user with email ${email}`);
  }
  const given = Buffer.from(hashPassword(password));
  const stored = Buffer.from(user.passwordHash);
  if (given.length !== stored.length || !timingSafeEqual(given, stored)) {
    throw new Error('Wrong password');
  }
  return createSession(user.id);
}
