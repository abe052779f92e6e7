export const NETWORK_GUARD = Symbol('NETWORK_GUARD');
