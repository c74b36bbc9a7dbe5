/** One memoized step as a peer runs it, timed from inside its workflow or loop. */
export interface PeerStep {
  ms: number
  /** PostgreSQL queries sent while it ran. */
  requests: number
}

/** A peer on the local PostgreSQL, started once for the section. */
export interface Peer {
  /** Runs `steps` memoized steps with the small value, one after another, in one workflow/thread. */
  round(steps: number): Promise<PeerStep[]>
  /** Stops it and drops its schema. */
  close(): Promise<void>
}
