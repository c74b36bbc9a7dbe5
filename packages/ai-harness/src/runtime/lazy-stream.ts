/**
 * A stream that starts on its first read: `start` runs then (so an error of its checks
 * rejects that read, not the call that made the stream), and once only.
 */
export function lazyStream<T>(start: () => AsyncIterator<T>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]: () => {
      let stream: AsyncIterator<T> | undefined
      return {
        next: () => {
          try {
            stream ??= start()
          } catch (error) {
            return Promise.reject(error)
          }
          return stream.next()
        },
        return: async () => (stream?.return ? stream.return() : { done: true, value: undefined }),
      }
    },
  }
}
