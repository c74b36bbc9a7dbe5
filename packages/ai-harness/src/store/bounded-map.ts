/**
 * A Map that forgets its least recently set entry past `max` entries: for a store's
 * caches, which only save requests, so forgetting costs a request and never a wrong answer.
 */
export function boundedMap<K, V>(max: number): Map<K, V> {
  const map = new Map<K, V>()
  const set = map.set.bind(map)
  map.set = (key, value) => {
    map.delete(key)
    set(key, value)
    if (map.size > max) map.delete(map.keys().next().value as K)
    return map
  }
  return map
}
