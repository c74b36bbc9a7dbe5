/**
 * The lease length of a store that has no liveness, only expiry (DynamoDB, S3): a dead
 * host's sessions come back after at most this long.
 *
 * Why 10 s is safe there: the host renews every third of it (3.3 s) with a store deadline
 * of a third (3.3 s), so a host that makes progress always holds at least a third of its
 * lease ahead, by its own clock. Expiry is compared on the clock of the host that looks
 * (these stores have no server clock), so a peer whose clock runs ahead by S sees the lease
 * end S early: a live host's lease is never taken while S stays under about 3 s. We assume
 * hosts' clocks agree within 1 s (NTP or chrony; cloud time sync keeps them within
 * milliseconds), which leaves 2 s for a slow renewal. A takeover anyway bumps the fence, so
 * the log keeps one writer whatever the clocks say; the bound is about side effects in flight.
 */
export const EXPIRY_ONLY_LEASE_MS = 10_000

/** The clock skew between hosts that {@link EXPIRY_ONLY_LEASE_MS} assumes at most. */
export const ASSUMED_CLOCK_SKEW_MS = 1_000
