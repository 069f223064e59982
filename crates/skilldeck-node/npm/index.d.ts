export * from './native';
export * from './errors';
export * from './seed';
