/** A Map that forgets its least recently set entries past `max`: the caches only save requests. */
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
