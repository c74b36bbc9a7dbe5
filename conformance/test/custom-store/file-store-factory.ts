/** The `processes` module of the file store: each racer process opens the store with it. */
import { racerStore } from './file-store-options.js'

export const createStore = racerStore({})
