import { proveBrokenStores } from './prove-broken-stores.js'

// The broken stores in three files, so vitest can run them side by side.
proveBrokenStores(1, 3)
