"""Which field names mark their value as a secret, and of what kind.

One classifier serves every context where a value sits under a name: env vars
(`TF_LICENSE_SIGN`), object and Helm-values keys (`greptime.password`), `key=value` and
`key: value` pairs in logs, command-line flags (`--token=...`) and HTTP headers. A name is
split into words (camelCase, snake_case, kebab-case, dotted), so `TSDB_MYSQL_PASSWORD`,
`clientSecret` and `client-key-data` are judged word by word.

Precision rules (each keeps a real field readable):

- A name whose *last* word says the value is metadata about a secret, not the secret, is
  not sensitive: `secretName`, `secretKeyRef`, `accessKeyPath`, `tokenExpirationSeconds`,
  `authType`, `SA_TOKEN_VERIFY_ENABLED`, `passwordMinLength`, PostgreSQL's
  `password_encryption` (the algorithm: `scram-sha-256`).
- The bare word `key` is not sensitive (toleration and selector `key:`, `configMapKeyRef.key`);
  it is when qualified: `apiKey`, `accessKey`, `client-key-data`, `tls.key`.
- LLM vocabulary is not sensitive: `max_tokens`, `eos_token`, `pad_token_id`, `tokenizer`.
- Plurals name collections of references (`imagePullSecrets`, `secrets`), not values.
"""

from __future__ import annotations

import re
from functools import lru_cache


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

# The value is about the secret (where it lives, how long it lasts, whether it is on).
_METADATA_WORDS = _set(
    """
    name names ref refs path paths file files filename dir directory location type types
    kind mode modes policy ttl seconds secs duration timeout interval expiry expiration
    expires expire length len size min max minimum maximum enabled enable disabled disable
    required optional url uri urls endpoint endpoints host hostname hosts server servers
    address addr port namespace selector field fields format source provider providers
    count version header headers prefix suffix id ids status method methods strategy
    template volume volumes mount mounts audience issuer scope scopes realm generation
    rotation env from service manager controller proxy plugin webhook handler module cache
    store backend agent job pod container containers mechanism algorithm algo config
    configs label labels annotation annotations key keys class plugin cert tls level
    mapping map refresh reset retries retry lifetime valid validation verify verified
    check checks error errors message missing stdin helper helpers encryption
    """
)
# Words that qualify a bare `key` into a credential (apiKey, client-key-data, tls.key).
_KEY_QUALIFIERS = _set(
    """
    api access secret private signing sign encryption encrypt master account license
    licence ssh client service auth enroll shared storage subscription app application
    consumer webhook deploy registration join bootstrap hmac jwt tls ngc hf openai x
    session admin root partner merchant ingest write read unseal recovery
    """
)
# Compound words, as users write them without separators.
_COMPOUND_KEYS = _set(
    """
    apikey accesskey secretkey privatekey signingkey encryptionkey masterkey accountkey
    licensekey sshkey clientkey servicekey authkey sharedkey storagekey subscriptionkey
    sharedaccesskey ingestkey
    """
)
# `<word>_token` that is not a credential (tokenizer special tokens, pagination).
_TOKEN_NOT_SECRET = _set(
    """
    bos eos pad unk sep cls mask special max min num total prompt completion input output
    new first last next page continue stop start end cancel sync resume cached decoder
    encoder vocab added
    """
)
_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "pw"})
# Short words that are a password only as a name's last word (`DB_PASS`, `db_pw`) or split
# from one (`PASS_WORD`), not where they lead something else (`PASS_THROUGH`, Playwright's
# `PW_TEST_HTML_REPORT_OPEN`).
_PASSWORD_ABBREVIATIONS = frozenset({"pass", "pw"})
_AUTH_WORDS = frozenset({"auth", "authorization", "basicauth", "proxyauth", "httpauth"})
_LICENSE_WORDS = frozenset({"license", "licence"})

# Names that are sensitive whole, whatever their words say.
_EXACT = {
    ".dockerconfigjson": "docker-auth",
    ".dockercfg": "docker-auth",
    "dockerconfigjson": "docker-auth",
    "dockercfg": "docker-auth",
    "kubectl.kubernetes.io/last-applied-configuration": "last-applied-configuration",
    "set-cookie": "cookie",
    "cookie": "cookie",
    "x-amz-security-token": "token",
    "x-amz-signature": "signature",
    "x-amz-credential": "credential",
    "sig": "signature",
    # Redis: `requirepass`, `masterauth` in redis.conf and on redis-server's command line.
    "requirepass": "password",
    "masterauth": "password",
}
# `auth.go:12]` (klog's file:line) and `token.py:88` name source files, not fields.
_SOURCE_FILES = _set("go py rs c h cc cpp hpp java kt scala js ts rb sh cs swift")
# HTTP header names: `X-Api-Key: v` is a pair also inside a quoted string (curl -H '...').
HEADER_NAMES = _set(
    """
    authorization proxy-authorization x-api-key api-key apikey x-auth-token x-access-token
    cookie set-cookie x-amz-security-token private-token x-vault-token x-goog-api-key
    ocp-apim-subscription-key
    """
)


# Substrings of every sensitive name (lowercase): where none occurs, no pair can be secret.
# (Rarer names, `cookie` and `dsn`, are judged in objects, not searched: DOCUMENT_KEYWORDS
# adds them for the documents worth parsing. `.dockerconfigjson` is searched: its base64 has
# no shape when the JSON inside is pretty-printed.)
KEYWORDS = ("pass", "pw", "secret", "token", "cred", "auth", "licen", "key", "sig", "dockerc")
DOCUMENT_KEYWORDS = (*KEYWORDS, "cookie", "dsn")
# The shell's working directories, in every `env` dump: `PWD=/workspace` is a path.
_SHELL_DIRECTORIES = frozenset({"PWD", "OLDPWD"})


def words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


@lru_cache(maxsize=16384)  # the same few hundred keys, over and over
def sensitive_kind(name: str) -> str | None:
    """The secret kind a value named `name` holds, or None when the value is not secret."""
    lowered = name.lower().lstrip("-").strip("\"'")
    if name.strip("\"'") in _SHELL_DIRECTORIES:
        return None
    if lowered in _EXACT:
        return _EXACT[lowered]
    ws = words(name)
    if not ws or (len(ws) > 1 and ws[-1] in _SOURCE_FILES and "." in name):
        return None
    last = ws[-1]
    if last in _METADATA_WORDS and not _is_qualified_key(ws):
        return None
    if ws[0] == "checksum" or (
        last in ("hash", "hashes") and ws[-2:-1] in (["cert"], ["certificate"])
    ):
        # A digest of something public or of a whole rendered manifest: Helm's
        # `checksum/secret` annotation (sha256sum of the Secret template), kubeadm's
        # `--discovery-token-ca-cert-hash` (the CA's public key; kubeadm join reference).
        return None
    if "client" in ws and "certificate" in ws:
        return "certificate"
    for i, w in enumerate(ws):
        prev = ws[i - 1] if i else ""
        following = ws[i + 1] if i + 1 < len(ws) else ""
        if w in _PASSWORD_ABBREVIATIONS and following not in ("", "word", "phrase"):
            continue
        if w in _PASSWORD_WORDS or "password" in w or "passwd" in w:
            return "password"
        if w in _LICENSE_WORDS:
            return "license"
        if w.endswith("token") and w not in ("tokens",):
            if prev in _TOKEN_NOT_SECRET or (i + 1 < len(ws) and ws[i + 1] == "id"):
                return None
            return "token"
        if w.endswith("secret"):
            return "secret"
        if w in ("credential", "credentials", "creds", "cred"):
            return "credential"
        if w in _COMPOUND_KEYS:
            return "private-key" if w in ("privatekey", "sshkey", "clientkey") else "api-key"
        if w == "key" and prev in _KEY_QUALIFIERS:
            return "private-key" if prev in ("private", "ssh", "client", "tls") else "api-key"
        if w in _AUTH_WORDS:
            return "auth"
        if w in ("signature", "cookie"):
            return w
    return None


# The characters of a field name as text writes it (`TF_LICENSE`, `client-key-data`, `tls.key`).
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def prefixed_kind(text: str, start: int, end: int) -> str | None:
    """The kind of the name `text[start:end]` after a `/`, read with its prefix: an annotation
    key (`checksum/secret`) is judged whole in text, as it is in an object."""
    ps = start - 1
    while ps > 0 and text[ps - 1] in NAME_CHARS:
        ps -= 1
    return sensitive_kind(text[ps:end])


def is_metadata_name(name: str) -> bool:
    """`secretName`, `path`, `type`: a name that describes a credential rather than holds it."""
    ws = words(name)
    return bool(ws) and ws[-1] in _METADATA_WORDS and ws[-1] not in _HOLDING_WORDS


# Metadata words for a name's classification that still hold the value inside a credential
# container (`credentials: {key: ...}`).
_HOLDING_WORDS = frozenset({"key", "keys", "cert", "tls", "config", "configs", "id", "ids"})


def _is_qualified_key(ws: list[str]) -> bool:
    # `client-key-data`, `tls.key`: a qualified key may end in a metadata-looking word only
    # when that word is `data` (kubeconfig) - otherwise `accessKeyPath` would count.
    for i in range(1, len(ws)):
        if ws[i] == "key" and ws[i - 1] in _KEY_QUALIFIERS:
            rest = ws[i + 1 :]
            return not rest or rest == ["data"]
    return False


# Values that are never secrets, whatever their name says (a switch, a null, a mask someone
# already applied, a template reference to the real value, the path of a key or certificate
# file: kube-apiserver's `--kubelet-client-key=/etc/kubernetes/pki/...key`, a kubeconfig's
# `client-key: ~/.minikube/...`).
# A shell variable (`$TOKEN`, `$1`) and a `<your-token-here>` template count as references.
# `changeme` and other well-known defaults do not: where one is in use, it is the password.
_NOT_A_VALUE = re.compile(
    r"(?is)(?:true|false|yes|no|on|off|enabled|disabled|null|none|nil|<nil>|<none>|undefined|"
    r"(?:~|\.{0,2})(?:/[\w.-]+)+\.(?:key|pem|crt|cert|der|p12|pfx|jks)|\*+|x{3,}|"
    r"redacted|\[redacted\]|<redacted>|<hidden>|\$\{[^}]*\}|\$\([^)]*\)|\{\{.*\}\}|"
    r"\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@*#?]|<[^<>\n]*>|\.{3,}|%[A-Za-z_][A-Za-z0-9_]*%)"
)


def is_placeholder_value(value: str) -> bool:
    """A value that needs no redaction: empty, a switch, a mask, a template or a placeholder."""
    v = value.strip()
    return not v or v.startswith("<redacted:") or _NOT_A_VALUE.fullmatch(v) is not None
