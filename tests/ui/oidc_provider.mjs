// A real OpenID provider for the SSO browser test: npm `oidc-provider`
// (a certified OP), on a loopback port, with its development login and
// consent pages (any user name, any password), one confidential client and
// three accounts' claims:
//   admin  -> groups ["registry-admins"], admin@acme.example
//   dev    -> groups ["acme-dev"],        dev@acme.example
//   anyone else -> no group, <name>@elsewhere.example
// The issuer is http://localhost:PORT (the registry is on 127.0.0.1, so the
// provider's redirect back is a cross-site navigation, as in production).
//
//   OIDC_PROVIDER_MODULES=DIR/node_modules OIDC_CLIENT_ID=.. \
//   OIDC_CLIENT_SECRET=.. node oidc_provider.mjs
// listens, prints "oidc provider issuer http://localhost:PORT", then reads
// the client's redirect URI (one line on stdin: the registry is started
// with the issuer in its config, so its address is known only then),
// and prints "oidc provider ready" once it answers.
import http from "node:http";
import { createRequire } from "node:module";

const require = createRequire(process.env.OIDC_PROVIDER_MODULES + "/");
const { default: Provider } = await import(require.resolve("oidc-provider"));

const clientId = process.env.OIDC_CLIENT_ID;
const clientSecret = process.env.OIDC_CLIENT_SECRET;

const server = http.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = server.address().port;
const issuer = `http://localhost:${port}`;
console.log(`oidc provider issuer ${issuer}`);

const redirectUri = await new Promise((resolve) => {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => {
    text += chunk;
    const nl = text.indexOf("\n");
    if (nl >= 0) resolve(text.slice(0, nl).trim());
  });
});

function claimsOf(id) {
  if (id === "admin") return { email: "admin@acme.example", groups: ["registry-admins"] };
  if (id === "dev") return { email: "dev@acme.example", groups: ["acme-dev"] };
  return { email: `${id}@elsewhere.example`, groups: [] };
}

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "client_secret_basic",
  }],
  scopes: ["openid", "email", "profile", "groups"],
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["name", "preferred_username"],
    groups: ["groups"],
  },
  async findAccount(ctx, id) {
    return {
      accountId: id,
      async claims() {
        const c = claimsOf(id);
        return { sub: id, email: c.email, email_verified: true, groups: c.groups,
                 name: id, preferred_username: id };
      },
    };
  },
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  cookies: { keys: ["skilldeck-test-only-cookie-key"] },
});
provider.proxy = false;
server.on("request", provider.callback());
console.log("oidc provider ready");
