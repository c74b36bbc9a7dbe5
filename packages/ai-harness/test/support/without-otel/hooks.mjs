/** Module resolution hook: `@opentelemetry/api` (and its subpaths) is not found, whatever node_modules holds. */
export async function resolve(specifier, context, next) {
  if (specifier === '@opentelemetry/api' || specifier.startsWith('@opentelemetry/api/')) {
    const error = new Error(`Cannot find package '${specifier}' (hidden by the test)`)
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return next(specifier, context)
}
