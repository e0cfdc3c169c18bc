// A user's project needs no vitest config; this one stops vitest from looking for one in the folders above.
export default {};
