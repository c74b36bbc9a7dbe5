/**
 * A workerd config (Cap'n Proto text) that loads one ES module (a path relative to the config) and passes it `CONFIG`.
 * No `compatibilityFlags`: in particular no `nodejs_compat`, so a `node:` import in the
 * bundle fails to load. Outbound fetch may reach loopback (where dynalite listens), and only that.
 */
export function workerdConfig(moduleFile: string, config: unknown, compatibilityDate: string): string {
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .flow),
    (name = "loopback", network = (allow = ["local"])),
  ],
);

const flow :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed ${JSON.stringify(moduleFile)})],
  compatibilityDate = ${JSON.stringify(compatibilityDate)},
  globalOutbound = "loopback",
  bindings = [(name = "CONFIG", text = ${JSON.stringify(JSON.stringify(config))})],
);
`
}
