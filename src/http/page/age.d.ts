// The type of age.js for its unit test; the page itself is plain JavaScript, served as it is.
export function age (since: string, now: number): string
