"""The formats the public rule sets (gitleaks, trufflehog, detect-secrets) hold by shape beyond
the core ones (tokens.FORMATS takes them after): chat bots, code search and quality, webhook
URLs, clouds, SaaS and payment services. docs/token-formats.md counts them per rule set and
lists what was left out, and why."""

from __future__ import annotations

from .token_format import (
    ALNUM,
    END,
    URLSAFE,
    UUID,
    WORD_DASH,
    WORD_DOT,
    TokenFormat,
    b64,
    crc32,
    fake,
    generated,
    rule_set_source,
)

# One row per format, kept compact: the table reads better than the formatter's layout.
# fmt: off
RULE_SET_FORMATS: tuple[TokenFormat, ...] = (
    # --- formats the public rule sets hold by shape (docs/token-formats.md counts them) -------
    # Where no page of the platform's states the shape, `source` is the rule set's text
    # (TokenFormat.from_rule_set) and the bounds are the rule sets' (their union where two
    # differ: New Relic's insert keys, Typeform's tokens).
    # Chat bots: a Telegram bot token is the bot's id, a colon and the secret; Telegram's page
    # shows that shape, the rule sets give the secret's 35 characters.
    TokenFormat(
        "telegram-bot-token", "Telegram (bot token)", "", "[0-9]{5,16}:A[A-Za-z0-9_-]{34}" + END,
        "https://core.telegram.org/bots/api#authorizing-your-bot",
        ("7123456789:AA" + fake(33, URLSAFE),),
        ("123456789:AAshort", "1712345678:Authentication_failed_for_user_x", "12:AA" + fake(33)),
        anchor=":A", check=lambda v: generated(v.split(":", 1)[1]),
        rule_sets=("gitleaks:telegram-bot-api-token", "trufflehog:telegrambottoken",
                   "detect-secrets:telegram_token"),
    ),
    # Code search and code quality
    TokenFormat(
        "sourcegraph-token", "Sourcegraph (access token v2, v3)", "sgp_",
        "(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}" + END,
        rule_set_source("gitleaks:sourcegraph-access-token"),
        ("sgp_" + "0123456789abcdef" * 2 + "01234567", "sgp_local_" + "fa4e" * 10,
         "sgp_0123456789abcdef_" + "fa4e" * 10),
        ("sgp_short", "sgp_" + "fa4e" * 9 + "fa4"),
        rule_sets=("gitleaks:sourcegraph-access-token", "trufflehog:sourcegraph"),
    ),
    TokenFormat(
        "sourcegraph-token", "Sourcegraph (Cody license key token)", "slk_", "[a-f0-9]{64}" + END,
        rule_set_source("trufflehog:sourcegraphcody"),
        ("slk_" + "0123456789abcdef" * 4,), ("slk_short", "slk_" + "fa4e" * 15),
        rule_sets=("trufflehog:sourcegraphcody",),
    ),
    TokenFormat(
        "sonarqube-token", "SonarQube Cloud (SonarCloud)", "sqco_", "[A-Za-z0-9]{59}" + END,
        rule_set_source("trufflehog:sonarcloud"),
        ("sqco_" + fake(59),), ("sqco_short", "sqco_" + fake(58)),
        rule_sets=("trufflehog:sonarcloud",),
    ),
    TokenFormat(
        "endorlabs-key", "Endor Labs (API key, secret)", "endr+", "[A-Za-z0-9-]{16}" + END,
        rule_set_source("trufflehog:endorlabs"),
        ("endr+" + fake(16),), ("endr+short", "endr+" + fake(17)), rule_sets=("trufflehog:endorlabs",),
    ),
    # Webhook URLs whose secret is in the path or the query
    TokenFormat(
        "tines-webhook", "Tines (webhook URL)", "tines.com/webhook/", "[a-z0-9]{32}/[a-z0-9]{32}(?![a-z0-9])",
        rule_set_source("trufflehog:tineswebhook"),
        ("tines.com/webhook/" + "0123456789abcdef" * 2 + "/" + "fa4e0123" * 4,),
        ("tines.com/webhook/", "tines.com/webhook/0123456789abcdef/short"), left=frozenset(),
        rule_sets=("trufflehog:tineswebhook",),
    ),
    TokenFormat(
        "zapier-webhook", "Zapier (catch hook URL)", "hooks.zapier.com/hooks/catch/",
        "[A-Za-z0-9/]{16,}", rule_set_source("trufflehog:zapierwebhook"),
        ("hooks.zapier.com/hooks/catch/1234567/fa4e0b1/",),
        ("hooks.zapier.com/hooks/catch/", "hooks.zapier.com/hooks/catch/123/"), left=frozenset(),
        rule_sets=("trufflehog:zapierwebhook",),
    ),
    TokenFormat(
        "teams-webhook", "Microsoft Teams (Power Automate workflow URL: its `sig` signs it)",
        "environment.api.powerplatform.com",
        "[A-Za-z0-9_.~%=&-]*sig=[A-Za-z0-9_%-]{20,}",
        rule_set_source("trufflehog:microsoftteamswebhook"),
        ("environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/"
         "3f9a1c7e5b2d4086a1c3e5f7b9d20468/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers"
         "&sv=1.0&sig=" + fake(43, URLSAFE),),
        ("environment.api.powerplatform.com/powerautomate/automations/direct/workflows/"
         "0123456789abcdef0123456789abcdef/triggers/manual/paths/invoke?api-version=1",),
        head="(?::[0-9]+)?/powerautomate/automations/direct/workflows/[a-f0-9]{32}/triggers/manual/paths/invoke\\?",
        left=frozenset(), rule_sets=("trufflehog:microsoftteamswebhook",),
    ),
    TokenFormat(
        "softlayer-key", "IBM SoftLayer (API key in the SOAP URL)", "api.softlayer.com/soap/",
        "[a-z0-9]{64}(?![a-z0-9])", rule_set_source("detect-secrets:softlayer"),
        ("api.softlayer.com/soap/v3/" + "fa4e0123456789ab" * 4,),
        ("api.softlayer.com/soap/v3/SoftLayer_Account",), head="v3(?:\\.1)?/", left=frozenset(),
        rule_sets=("detect-secrets:softlayer",),
    ),
    # Clouds, registries and identity
    TokenFormat(
        "aws-access-key-id", "AWS (A3T, a prefix the rule sets add)", "A3T", "[A-Z0-9][A-Z2-7]{16}(?![A-Za-z0-9])",
        rule_set_source("gitleaks:aws-access-token"),
        ("A3TXIOSFODNN7EXAMPLE",), ("A3TXIOSFODNN7EXAMPLEX", "A3T0123"),
        rule_sets=("gitleaks:aws-access-token", "detect-secrets:aws"),
    ),
    *(
        TokenFormat(
            "azure-refresh-token", "Microsoft Entra ID (refresh token)", prefix,
            "[A-Za-z0-9_-]{50,}(?:\\.[0-9])?\\.Ag[A-Za-z0-9_-]{250,}(?:\\.A[A-Za-z0-9_-]{200,})?",
            rule_set_source("trufflehog:azure_entra"),
            (prefix + fake(60, URLSAFE) + ".Ag" + fake(260, URLSAFE),),
            (prefix + "ppendix", prefix + fake(60)), left=WORD_DOT, rule_sets=("trufflehog:azure_entra",),
        )
        for prefix in ("0.A", "1.A")
    ),
    TokenFormat(
        "azure-registry-password", "Azure Container Registry (access key)", "",
        "[A-Za-z0-9+/]{42}\\+ACR[A-Za-z0-9]{6}(?![A-Za-z0-9+/=])",
        rule_set_source("trufflehog:azurecontainerregistry"),
        (fake(42) + "+ACR" + fake(6),), (fake(20) + "+ACRfake01",), anchor="+ACR",
        left=ALNUM | frozenset("+/"), rule_sets=("trufflehog:azurecontainerregistry",),
    ),
    TokenFormat(
        "azure-storage-key", "Azure Storage (account key in a connection string)", "AccountKey",
        "[A-Za-z0-9+/]{86}==", rule_set_source("detect-secrets:azure_storage_key"),
        ("AccountKey=" + fake(86) + "==",), ("AccountKeyVaultUri", "AccountKeys"), head="=",
        left=ALNUM, rule_sets=("detect-secrets:azure_storage_key",),
    ),
    *(
        TokenFormat(
            "cloudflare-token", "Cloudflare (API token, global API key)", prefix,
            "[A-Za-z0-9]{40}[a-f0-9]{8}" + END, rule_set_source(rule),
            # 40 and the CRC32 of those 40 in hex.
            (prefix + fake(40) + crc32(fake(40)).lower(),), (prefix + "short", prefix + fake(40)),
            rule_sets=(rule,),
        )
        for prefix, rule in (("cfut_", "trufflehog:cloudflareapitoken"),
                             ("cfat_", "trufflehog:cloudflareapitoken"),
                             ("cfk_", "trufflehog:cloudflareglobalapikey"))
    ),
    TokenFormat(
        "cloudflare-token", "Cloudflare (Origin CA key)", "v1.0-", "[a-f0-9]{24}-[a-f0-9]{146}" + END,
        rule_set_source("gitleaks:cloudflare-origin-ca-key"),
        ("v1.0-" + "0123456789abcdef01234567-" + "fa4e0123456789ab" * 9 + "01",),
        ("v1.0-beta", "v1.0-0123456789abcdef01234567"),
        rule_sets=("gitleaks:cloudflare-origin-ca-key", "trufflehog:cloudflarecakey"),
    ),
    TokenFormat(
        "yandex-key", "Yandex Cloud (API key)", "AQVN", "[A-Za-z0-9_-]{35,38}" + END,
        rule_set_source("gitleaks:yandex-api-key"),
        ("AQVN" + fake(36, URLSAFE),), ("AQVNshort",), left=ALNUM,
        rule_sets=("gitleaks:yandex-api-key",),
    ),
    TokenFormat(
        "onepassword-secret-key", "1Password (account Secret Key)", "A3-",
        "[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}(?![A-Za-z0-9])",
        rule_set_source("gitleaks:1password-secret-key"),
        ("A3-FAKE01-FAKE01-FAKE0-FAKE1-FAKE2-FAKE3", "A3-FAKE01-FAKE0123456-FAKE0-FAKE1-FAKE2"),
        ("A3-PAPER", "A3-FAKE01-FAKE0"), rule_sets=("gitleaks:1password-secret-key",),
    ),
    *(
        TokenFormat(
            "authress-key", "Authress (service client access key)", prefix,
            "[A-Za-z0-9]{5,30}\\.[A-Za-z0-9]{4,6}\\.acc[_-][A-Za-z0-9-]{10,32}\\.[A-Za-z0-9+/_=-]{30,120}"
            "(?![A-Za-z0-9+/_=-])",
            rule_set_source("gitleaks:authress-service-client-access-key"),
            (prefix + "fake01.fa4e.acc_fake0123456789.MC4CAQAwBQYDK2VwBCIEI" + fake(43),), (prefix + "fake01.fa4e",),
            rule_sets=("gitleaks:authress-service-client-access-key",),
        )
        for prefix in ("sc_", "ext_", "scauth_", "authress_")
    ),
    TokenFormat(
        "salesforce-token", "Salesforce (refresh token)", "5AEP861", "[A-Za-z0-9._=]{80,}",
        rule_set_source("trufflehog:salesforcerefreshtoken"),
        ("5AEP861" + fake(90),), ("5AEP861short",), left=ALNUM,
        rule_sets=("trufflehog:salesforcerefreshtoken",),
    ),
    # `ico-` is also a file's extension and a dash (`favicon.ico-<hash>`): not after a dot.
    TokenFormat(
        "infracost-key", "Infracost (API key)", "ico-", "[A-Za-z0-9]{32}" + END,
        rule_set_source("gitleaks:infracost-api-token"),
        ("ico-" + fake(32),), ("ico-short", "favicon.ico-" + "fa4e0123456789ab" * 2), left=WORD_DOT,
        rule_sets=("gitleaks:infracost-api-token",),
    ),
    TokenFormat(
        "adobe-secret", "Adobe (OAuth client secret)", "p8e-", "[A-Za-z0-9]{32}" + END,
        rule_set_source("gitleaks:adobe-client-secret"),
        ("p8e-" + fake(32),), ("p8e-short", "p8e-" + fake(33)), rule_sets=("gitleaks:adobe-client-secret",),
    ),
    # The secret (`s-`); the client's uid (`u-s4t2ud-`) names the application.
    TokenFormat(
        "intra42-secret", "42 Intra (client secret)", "s-s4t2", "(?:ud|af)-[a-fA-F0-9]{64}" + END,
        rule_set_source("gitleaks:intra42-client-secret"),
        ("s-s4t2ud-" + "fa4e0123456789ab" * 4,), ("s-s4t2ud-short", "u-s4t2ud-" + "fa4e0123456789ab" * 4), left=WORD_DASH,
        rule_sets=("gitleaks:intra42-client-secret", "trufflehog:intra42"),
    ),
    # Code hosting, CI and package registries
    TokenFormat(
        "bitbucket-token", "Bitbucket (app password)", "ATBB", "[A-Za-z0-9_=.-]{28,}",
        rule_set_source("trufflehog:bitbucketapppassword"),
        ("ATBB" + fake(24) + crc32("ATBB" + fake(24)),), ("ATBBshort",), left=ALNUM, check=lambda v: generated(v[4:]),
        rule_sets=("trufflehog:bitbucketapppassword",),
    ),
    TokenFormat(
        "bitbucket-token", "Bitbucket Data Center (HTTP access token)", "BBDC-",
        "[A-Za-z0-9+/@_-]{40,50}(?![A-Za-z0-9+/@_-])",
        rule_set_source("trufflehog:atlassiandatacenter"),
        # base64 of `<id>:<20 random bytes>`
        ("BBDC-" + b64(b"210987654321:" + bytes(range(1, 256, 13))),), ("BBDC-short",), left=ALNUM,
        rule_sets=("trufflehog:atlassiandatacenter",),
    ),
    TokenFormat(
        "atlassian-token", "Atlassian (Confluence/Jira API token, newer)", "ATCTT3",
        "[A-Za-z0-9_=+/-]{100,}", rule_set_source("trufflehog:atlassian"),
        ("ATCTT3xFfGN0" + fake(171, URLSAFE) + "=" + crc32("ATCTT3xFfGN0" + fake(171, URLSAFE) + "="),), ("ATCTT3short",),
        left=ALNUM, rule_sets=("trufflehog:atlassian",),
    ),
    TokenFormat(
        "gitlab-session", "GitLab (session cookie)", "_gitlab_session", "[0-9a-z]{32}" + END,
        rule_set_source("gitleaks:gitlab-session-cookie"),
        ("_gitlab_session=" + "fa4e0123456789ab" * 2,), ("_gitlab_session=", "_gitlab_session=short"),
        head="=", rule_sets=("gitleaks:gitlab-session-cookie",),
    ),
    TokenFormat(
        "clojars-token", "Clojars", "CLOJARS_", "[A-Za-z0-9]{60}" + END,
        rule_set_source("gitleaks:clojars-api-token"),
        ("CLOJARS_" + fake(60, "0123456789abcdef"),), ("CLOJARS_USERNAME", "CLOJARS_" + fake(30)),
        rule_sets=("gitleaks:clojars-api-token",),
    ),
    TokenFormat(
        "rubygems-key", "RubyGems", "rubygems_", "[a-f0-9]{48}" + END,
        rule_set_source("gitleaks:rubygems-api-token"),
        ("rubygems_" + "fa4e0123456789ab" * 3,), ("rubygems_version", "rubygems_" + "fa4e" * 10),
        rule_sets=("gitleaks:rubygems-api-token", "trufflehog:rubygems"),
    ),
    TokenFormat(
        "readme-key", "ReadMe", "rdme_", "[a-z0-9]{70}" + END, rule_set_source("gitleaks:readme-api-token"),
        ("rdme_" + fake(70, "fake0123456789"),), ("rdme_short", "rdme_" + fake(69, "fake0123456789")),
        rule_sets=("gitleaks:readme-api-token", "trufflehog:readme"),
    ),
    TokenFormat(
        "postman-key", "Postman", "PMAK-", "[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + END,
        rule_set_source("gitleaks:postman-api-token"),
        ("PMAK-" + "0123456789abcdef01234567-" + "fa4e0123456789ab" * 2 + "01",),
        ("PMAK-short", "PMAK-0123456789abcdef01234567"),
        rule_sets=("gitleaks:postman-api-token", "trufflehog:postman"),
    ),
    TokenFormat(
        "linear-key", "Linear (API key)", "lin_api_", "[A-Za-z0-9]{40}" + END,
        rule_set_source("gitleaks:linear-api-key"),
        ("lin_api_" + fake(40),), ("lin_api_key", "lin_api_" + fake(39)),
        rule_sets=("gitleaks:linear-api-key", "trufflehog:linearapi"),
    ),
    TokenFormat(
        "scalingo-token", "Scalingo", "tk-us-", "[A-Za-z0-9_-]{48}" + END,
        rule_set_source("gitleaks:scalingo-api-token"),
        ("tk-us-" + fake(48, URLSAFE),), ("tk-us-short", "tk-us-east-1"), left=WORD_DASH,
        rule_sets=("gitleaks:scalingo-api-token",),
    ),
    TokenFormat(
        "prefect-key", "Prefect (API key)", "pnu_", "[A-Za-z0-9]{36}" + END,
        rule_set_source("gitleaks:prefect-api-token"),
        ("pnu_" + fake(36),), ("pnu_short", "pnu_" + fake(35)),
        rule_sets=("gitleaks:prefect-api-token", "trufflehog:prefect"),
    ),
    TokenFormat(
        "planetscale-token", "PlanetScale (service token, OAuth token, database password)", "pscale_",
        "(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}(?![A-Za-z0-9_=.-])",
        rule_set_source("gitleaks:planetscale-api-token"),
        ("pscale_tkn_" + fake(43), "pscale_pw_" + fake(43), "pscale_oauth_" + fake(32)),
        ("pscale_tkn_short", "pscale_db_" + fake(43)),
        rule_sets=("gitleaks:planetscale-api-token", "gitleaks:planetscale-oauth-token",
                   "gitleaks:planetscale-password", "trufflehog:planetscale", "trufflehog:planetscaledb"),
    ),
    # `ddp_`, `ddw_` whole: a two-letter `dd` would stop the scan in every "add" and "hidden".
    *(
        TokenFormat(
            "deno-token", "Deno Deploy (personal, organisation)", prefix, "[A-Za-z0-9]{36}" + END,
            rule_set_source("trufflehog:deno"), (prefix + fake(36),), (prefix + "short",),
            rule_sets=("trufflehog:deno",),
        )
        for prefix in ("ddp_", "ddw_")
    ),
    TokenFormat(
        "rootly-key", "Rootly", "rootly_", "[a-f0-9]{64}" + END, rule_set_source("trufflehog:rootly"),
        ("rootly_" + "fa4e0123456789ab" * 4,), ("rootly_config", "rootly_" + "fa4e" * 8),
        rule_sets=("trufflehog:rootly",),
    ),
    TokenFormat(
        "trufflehog-key", "TruffleHog Enterprise (secret)", "thog-secret-", "[a-f0-9]{32}" + END,
        rule_set_source("trufflehog:trufflehogenterprise"),
        ("thog-secret-" + "fa4e0123456789ab" * 2,), ("thog-secret-short",), left=WORD_DASH,
        rule_sets=("trufflehog:trufflehogenterprise",),
    ),
    # AI platforms
    TokenFormat(
        "langsmith-key", "LangSmith (personal, service key)", "lsv2_",
        "(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}" + END, rule_set_source("trufflehog:langsmith"),
        ("lsv2_pt_" + "fa4e0123456789ab" * 2 + "_0123456789",), ("lsv2_pt_short",),
        rule_sets=("trufflehog:langsmith",),
    ),
    TokenFormat(
        "pinecone-key", "Pinecone", "pcsk_", "[A-Za-z0-9]{5,6}_[A-Za-z0-9]{63}" + END,
        rule_set_source("trufflehog:pinecone"),
        ("pcsk_Fake0_" + fake(63),), ("pcsk_short",), rule_sets=("trufflehog:pinecone",),
    ),
    TokenFormat(
        "saladcloud-key", "SaladCloud", "salad_cloud_", "[A-Za-z0-9]{1,7}_[A-Za-z0-9]{7,235}" + END,
        rule_set_source("trufflehog:saladcloudapikey"),
        ("salad_cloud_user_" + fake(40),), ("salad_cloud_",), check=lambda v: generated(v.rsplit("_", 1)[1]),
        rule_sets=("trufflehog:saladcloudapikey",),
    ),
    TokenFormat(
        "elevenlabs-key", "ElevenLabs (API key)", "sk_", "[a-f0-9]{48}" + END,
        rule_set_source("trufflehog:elevenlabs"),
        ("sk_" + "fa4e0123456789ab" * 3,), ("sk_short", "sk_" + "fa4e" * 11), rule_sets=("trufflehog:elevenlabs",),
    ),
    TokenFormat(
        "netlify-token", "Netlify (personal access token)", "nfp_", "[A-Za-z0-9_]{36}(?![A-Za-z0-9_])",
        rule_set_source("trufflehog:netlify"),
        ("nfp_" + fake(36),), ("nfp_short",), check=lambda v: generated(v[4:]), rule_sets=("trufflehog:netlify",),
    ),
    TokenFormat(
        "portainer-token", "Portainer (access token)", "ptr_", "[A-Za-z0-9/_+=-]{20,60}(?![A-Za-z0-9/_+=-])",
        rule_set_source("trufflehog:portainertoken"),
        ("ptr_" + fake(44),), ("ptr_short", "ptr_to_the_shared_memory_segment"),
        check=lambda v: generated(v[4:]), rule_sets=("trufflehog:portainertoken",),
    ),
    TokenFormat(
        "apify-token", "Apify", "apify_api_", "[A-Za-z0-9-]{36}" + END, rule_set_source("trufflehog:apify"),
        ("apify_api_" + fake(36),), ("apify_api_short",), rule_sets=("trufflehog:apify",),
    ),
    TokenFormat(
        "posthog-key", "PostHog (personal API key)", "phx_", "[A-Za-z0-9_]{43,48}(?![A-Za-z0-9_])",
        rule_set_source("trufflehog:posthog"),
        ("phx_" + fake(43),), ("phx_short",), check=lambda v: generated(v[4:]),
        rule_sets=("trufflehog:posthog",),
    ),
    # `VF.` is ordinary text; the body is exact: 24 hex digits, a dot and 16 letters and digits.
    TokenFormat(
        "voiceflow-key", "Voiceflow (API key)", "VF.", "(?:(?:DM|WS)\\.)?[a-fA-F0-9]{24}\\.[A-Za-z0-9]{16}" + END,
        rule_set_source("trufflehog:voiceflow"),
        ("VF.DM." + "fa4e0123456789ab01234567" + "." + fake(16),),
        ("VF.DM.short", "VF." + "fa4e0123456789ab01234567" + "." + fake(15)), left=WORD_DOT,
        rule_sets=("trufflehog:voiceflow",),
    ),
    # Mail, messaging and notes
    TokenFormat(
        "mailgun-key", "Mailgun (private API key)", "key-", "[a-z0-9]{32}" + END,
        rule_set_source("trufflehog:mailgun"),
        ("key-" + "fa4e0123456789ab" * 2,), ("key-value-store-for-the-cluster", "key-" + "a" * 32),
        left=WORD_DASH, check=lambda v: any(c.isdigit() for c in v[4:]) and any(c.isalpha() for c in v[4:]),
        rule_sets=("gitleaks:mailgun-private-api-token", "trufflehog:mailgun"),
    ),
    TokenFormat(
        "brevo-key", "Brevo (Sendinblue, API v3 key)", "xkeysib-", "[a-f0-9]{64}-[A-Za-z0-9]{16}" + END,
        rule_set_source("gitleaks:sendinblue-api-token"),
        ("xkeysib-" + "fa4e0123456789ab" * 4 + "-" + fake(16),), ("xkeysib-short",), left=WORD_DASH,
        rule_sets=("gitleaks:sendinblue-api-token", "trufflehog:sendinbluev2"),
    ),
    TokenFormat(
        "twilio-key", "Twilio (API key SID)", "SK", "[0-9a-fA-F]{32}" + END,
        rule_set_source("gitleaks:twilio-api-key"),
        ("SK" + "0123456789abcdef" * 2,), ("SK" + "0" * 32, "SKU-0123"), left=ALNUM,
        check=lambda v: any(c.isdigit() for c in v[2:]) and any(c.isalpha() for c in v[2:]),
        rule_sets=("gitleaks:twilio-api-key", "trufflehog:twilioapikey", "detect-secrets:twilio"),
    ),
    *(
        TokenFormat(
            "notion-token", "Notion (integration token)", prefix, body + END,
            rule_set_source(rule), (example,), near, check=check, rule_sets=rules,
        )
        for prefix, body, rule, example, near, check, rules in (
            ("ntn_", "[0-9]{11}[A-Za-z0-9]{35}", "gitleaks:notion-api-token",
             "ntn_01234567890" + fake(35), ("ntn_short",), None, ("gitleaks:notion-api-token",)),
            ("secret_", "[A-Za-z0-9]{43}", "trufflehog:notion", "secret_" + fake(43),
             ("secret_" + "KeyForTheApplicationServerSessionStoreHere",),
             lambda v: generated(v[7:]), ("trufflehog:notion",)),
        )
    ),
    TokenFormat(
        "typeform-token", "Typeform (personal access token)", "tfp_", "[A-Za-z0-9_=.-]{40,59}(?![A-Za-z0-9_=.-])",
        rule_set_source("trufflehog:typeform"),
        ("tfp_" + fake(44) + "_" + fake(14),), ("tfp_short",), check=lambda v: generated(v[4:]),
        rule_sets=("gitleaks:typeform-api-token", "trufflehog:typeform"),
    ),
    TokenFormat(
        "contentful-token", "Contentful (personal access token)", "CFPAT-", "[A-Za-z0-9_-]{43}" + END,
        rule_set_source("trufflehog:contentfulpersonalaccesstoken"),
        ("CFPAT-" + fake(43, URLSAFE),), ("CFPAT-short",), left=WORD_DASH,
        rule_sets=("trufflehog:contentfulpersonalaccesstoken",),
    ),
    *(
        TokenFormat(
            "figma-token", "Figma (personal access token)", prefix, "[A-Za-z0-9_=-]{40,54}(?![A-Za-z0-9_=-])",
            rule_set_source("trufflehog:figmapersonalaccesstoken"),
            (prefix + fake(40, URLSAFE),), (prefix + "short",),
            rule_sets=("trufflehog:figmapersonalaccesstoken",),
        )
        for prefix in ("figd_", "figp_")
    ),
    TokenFormat(
        "frameio-token", "Frame.io (developer token)", "fio-u-", "[A-Za-z0-9_=-]{64}(?![A-Za-z0-9_=-])",
        rule_set_source("gitleaks:frameio-api-token"),
        ("fio-u-" + fake(64, URLSAFE),), ("fio-u-short", "fio-u-" + fake(65, URLSAFE)), left=WORD_DASH,
        rule_sets=("gitleaks:frameio-api-token", "trufflehog:frameio"),
    ),
    # `na1.` is a region's host name; the body is exact: 100 base64 characters of all three
    # classes, which no host name or word holds.
    TokenFormat(
        "fullstory-key", "FullStory (API key)", "na1.", "[A-Za-z0-9+/]{100}(?![A-Za-z0-9+/=_-])",
        rule_set_source("trufflehog:fullstory"),
        ("na1." + fake(100),), ("na1.fullstory.com", "na1." + fake(99)), left=WORD_DOT,
        check=lambda v: all(any(test(c) for c in v[4:]) for test in (str.isupper, str.islower, str.isdigit)),
        rule_sets=("trufflehog:fullstory",),
    ),
    # `NF-` is ordinary text (NF-kB, a part number): 32 letters and digits of a generated mix.
    TokenFormat(
        "nightfall-key", "Nightfall (API key)", "NF-", "[A-Za-z0-9]{32}" + END, rule_set_source("trufflehog:nightfall"),
        ("NF-" + fake(32),), ("NF-kB", "NF-" + "A" * 32), left=WORD_DASH, check=lambda v: generated(v[3:]),
        rule_sets=("trufflehog:nightfall",),
    ),
    TokenFormat(
        "airtable-token", "Airtable (personal access token)", "pat", "[A-Za-z0-9]{14}\\.[a-f0-9]{64}" + END,
        rule_set_source("gitleaks:airtable-personnal-access-token"),
        ("pat" + fake(14) + "." + "fa4e0123456789ab" * 4,), ("patchesStrategic.merge", "pattern.0123"),
        rule_sets=("gitleaks:airtable-personnal-access-token", "trufflehog:airtablepersonalaccesstoken"),
    ),
    TokenFormat(
        "clickhouse-key", "ClickHouse Cloud (API secret)", "4b1d", "[A-Za-z0-9]{38}" + END,
        rule_set_source("gitleaks:clickhouse-cloud-api-secret-key"),
        ("4b1d" + fake(38),), ("4b1d" + "0123456789abcdef" * 2 + "012345", "4b1dshort"), left=ALNUM,
        check=lambda v: any(c.isupper() for c in v) and any(c.islower() for c in v[4:]),
        rule_sets=("gitleaks:clickhouse-cloud-api-secret-key",),
    ),
    TokenFormat(
        "defined-networking-key", "Defined Networking (API key)", "dnkey-",
        "[A-Za-z0-9_=-]{26}-[A-Za-z0-9_=-]{52}" + END,
        rule_set_source("gitleaks:defined-networking-api-token"),
        ("dnkey-" + fake(26, "FAKE234567") + "-" + fake(52, "FAKE234567"),), ("dnkey-short",), left=WORD_DASH,
        rule_sets=("gitleaks:defined-networking-api-token",),
    ),
    TokenFormat(
        "octopus-key", "Octopus Deploy", "API-", "[A-Z0-9]{26}" + END, rule_set_source("gitleaks:octopus-deploy-api-key"),
        ("API-" + fake(26, "FAKE0123456789"),), ("API-GATEWAYSERVICEDEPLOYMENTS", "API-SHORT"), left=WORD_DASH,
        check=lambda v: any(c.isdigit() for c in v[4:]) and any(c.isalpha() for c in v[4:]),
        rule_sets=("gitleaks:octopus-deploy-api-key",),
    ),
    TokenFormat(
        "newrelic-key", "New Relic (Insights insert, query key)", "NRI", "[IQ]-[A-Za-z0-9_-]{25,32}" + END,
        rule_set_source("trufflehog:newrelicinsightsinsertkey"),
        ("NRII-" + fake(32, URLSAFE), "NRIQ-" + fake(25)), ("NRII-short",),
        left=WORD_DASH,
        rule_sets=("gitleaks:new-relic-insert-key", "trufflehog:newrelicinsightsinsertkey",
                   "trufflehog:newrelicinsightsquerykey"),
    ),
    # Payments and commerce
    TokenFormat(
        "shopify-token", "Shopify (admin, custom app, private app token; shared secret)", "shp",
        "(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + END, rule_set_source("gitleaks:shopify-access-token"),
        ("shpat_" + "fa4e0123456789ab" * 2, "shpss_" + "0123456789abcdef" * 2),
        ("shpat_short", "shpxx_" + "fa4e0123456789ab" * 2),
        rule_sets=("gitleaks:shopify-access-token", "gitleaks:shopify-custom-access-token",
                   "gitleaks:shopify-private-app-access-token", "gitleaks:shopify-shared-secret",
                   "trufflehog:shopify", "trufflehog:shopifyoauth"),
    ),
    TokenFormat(
        "shippo-token", "Shippo", "shippo_", "(?:live|test)_[a-fA-F0-9]{40}" + END,
        rule_set_source("gitleaks:shippo-api-token"),
        ("shippo_test_" + "fa4e0123456789ab" * 2 + "01234567",), ("shippo_test_short", "shippo_client"),
        rule_sets=("gitleaks:shippo-api-token", "trufflehog:shippo"),
    ),
    TokenFormat(
        "square-token", "Square (access token)", "EAAA", "[A-Za-z0-9_-]{22,60}(?![A-Za-z0-9_+/=-])",
        rule_set_source("gitleaks:square-access-token"), ("EAAA" + fake(60, URLSAFE),),
        ("EAAAshort",), left=ALNUM | frozenset("+/"),
        rule_sets=("gitleaks:square-access-token", "trufflehog:square"),
    ),
    # The application secret (`sq0csp-`, `sandbox-sq0csb-`); its id (`sq0idp-`) is public.
    TokenFormat(
        "square-secret", "Square (OAuth application secret)", "sq0c", "[a-z]{2}-[A-Za-z0-9_-]{40,50}" + END,
        rule_set_source("trufflehog:squareapp"),
        ("sq0csp-" + fake(43, URLSAFE),), ("sq0csp-short", "sq0idp-" + fake(43, URLSAFE)),
        rule_sets=("trufflehog:squareapp", "detect-secrets:square_oauth"),
    ),
    *(
        TokenFormat(
            "facebook-token", "Facebook (page access token)", prefix, "[A-Za-z0-9]{100,}(?![A-Za-z0-9_+/=-])",
            rule_set_source("gitleaks:facebook-page-access-token"), (prefix + fake(120),),
            (prefix + "short",), left=ALNUM | frozenset("+/"),
            rule_sets=("gitleaks:facebook-page-access-token",),
        )
        for prefix in ("EAAM", "EAAC")
    ),
    TokenFormat(
        "flutterwave-key", "Flutterwave (secret, encryption key)", "FLWSECK",
        "(?:_TEST)?-(?:[A-Ha-h0-9]{32}-X|[A-Ha-h0-9]{12})" + END,
        rule_set_source("gitleaks:flutterwave-secret-key"),
        ("FLWSECK_TEST-" + "0123456789abcdef" * 2 + "-X", "FLWSECK-" + "0123456789abcdef" * 2 + "-X",
         "FLWSECK_TEST-0123456789ab"),
        ("FLWSECK_TEST-short",),
        rule_sets=("gitleaks:flutterwave-secret-key", "gitleaks:flutterwave-encryption-key",
                   "trufflehog:flutterwave"),
    ),
    *(
        TokenFormat(
            "easypost-key", "EasyPost (production, test key)", prefix, "[A-Za-z0-9]{54}" + END,
            rule_set_source(rule), (prefix + fake(54),), (prefix + "short",), left=ALNUM,
            rule_sets=(rule,),
        )
        for prefix, rule in (("EZAK", "gitleaks:easypost-api-token"), ("EZTK", "gitleaks:easypost-test-api-token"))
    ),
    TokenFormat(
        "duffel-token", "Duffel", "duffel_", "(?:test|live)_[A-Za-z0-9_=-]{43}" + END,
        rule_set_source("gitleaks:duffel-api-token"),
        ("duffel_test_" + fake(43, URLSAFE),), ("duffel_test_short",),
        rule_sets=("gitleaks:duffel-api-token",),
    ),
    TokenFormat(
        "gocardless-token", "GoCardless (live access token)", "live_", "[A-Za-z0-9_=-]{40}" + END,
        rule_set_source("trufflehog:gocardless"),
        ("live_" + fake(40, URLSAFE),), ("live_migration_enabled_for_this_cluster1",),
        check=lambda v: generated(v[5:]),
        rule_sets=("gitleaks:gocardless-api-token", "trufflehog:gocardless"),
    ),
    TokenFormat(
        "plaid-token", "Plaid (access token)", "access-", f"(?:sandbox|development|production)-{UUID}" + END,
        rule_set_source("gitleaks:plaid-api-token"),
        ("access-sandbox-00000000-fa4e-4000-8000-000000000000",), ("access-sandbox-short", "access-log"),
        left=WORD_DASH, rule_sets=("gitleaks:plaid-api-token", "trufflehog:plaidkey"),
    ),
    TokenFormat(
        "pagarme-key", "Pagar.me", "ak_live_", "[A-Za-z0-9]{30}" + END, rule_set_source("trufflehog:pagarme"),
        ("ak_live_" + fake(30),), ("ak_live_short",), rule_sets=("trufflehog:pagarme",),
    ),
    TokenFormat(
        "ramp-secret", "Ramp (client secret)", "ramp_sec_", "[A-Za-z0-9]{48}" + END,
        rule_set_source("trufflehog:ramp"),
        ("ramp_sec_" + fake(48),), ("ramp_sec_short",), rule_sets=("trufflehog:ramp",),
    ),
    TokenFormat(
        "robinhood-key", "Robinhood Crypto (API key)", "rh-api-", UUID + END,
        rule_set_source("trufflehog:robinhoodcrypto"),
        ("rh-api-00000000-fa4e-4000-8000-000000000000",), ("rh-api-short",), left=WORD_DASH,
        rule_sets=("trufflehog:robinhoodcrypto",),
    ),
    TokenFormat(
        "hubspot-token", "HubSpot (private app token)", "pat-", f"(?:na|eu)1-{UUID}" + END,
        rule_set_source("trufflehog:hubspot_apikey"),
        ("pat-na1-00000000-fa4e-4000-8000-000000000000",), ("pat-na1-short", "pat-eu1"),
        left=WORD_DASH, rule_sets=("trufflehog:hubspot_apikey",),
    ),
    TokenFormat(
        "klaviyo-key", "Klaviyo (private API key)", "pk_", "(?:[A-Za-z0-9]{6}_)?[0-9a-f]{34}" + END,
        rule_set_source("trufflehog:klaviyo"),
        ("pk_" + "fa4e0123456789ab" * 2 + "01", "pk_Fake01_" + "0123456789abcdef" * 2 + "fa"),
        ("pk_live_short", "pk_" + "fa4e" * 8), rule_sets=("trufflehog:klaviyo",),
    ),
    TokenFormat(
        "fleetbase-key", "Fleetbase (live key)", "flb_live_", "[A-Za-z0-9]{20}" + END,
        rule_set_source("trufflehog:fleetbase"),
        ("flb_live_" + fake(20),), ("flb_live_short",), rule_sets=("trufflehog:fleetbase",),
    ),
    TokenFormat(
        "flexport-key", "Flexport", "shltm_", "[A-Za-z0-9_-]{40}" + END, rule_set_source("trufflehog:flexport"),
        ("shltm_" + fake(40, URLSAFE),), ("shltm_short",), rule_sets=("trufflehog:flexport",),
    ),
    TokenFormat(
        "bannerbear-key", "Bannerbear (project, master key)", "bb_", "(?:pr|ma)_[a-f0-9]{30}" + END,
        rule_set_source("trufflehog:bannerbear"),
        ("bb_pr_" + "fa4e0123456789ab0123456789abcd",), ("bb_pr_short",), rule_sets=("trufflehog:bannerbear",),
    ),
    TokenFormat(
        "adafruit-key", "Adafruit IO", "aio_", "[A-Za-z0-9]{28}" + END, rule_set_source("trufflehog:adafruitio"),
        ("aio_" + fake(28),), ("aio_short", "aio_" + "a" * 28), check=lambda v: generated(v[4:]),
        rule_sets=("trufflehog:adafruitio",),
    ),
    TokenFormat(
        "ubidots-token", "Ubidots (API token)", "BBFF-", "[A-Za-z0-9]{30}" + END, rule_set_source("trufflehog:ubidots"),
        ("BBFF-" + fake(30),), ("BBFF-short", "BBFF-" + fake(31)), left=WORD_DASH,
        rule_sets=("trufflehog:ubidots",),
    ),
    TokenFormat(
        "settlemint-token", "SettleMint (application, personal, service token)", "sm_",
        "[aps]at_[A-Za-z0-9]{16}" + END, rule_set_source("gitleaks:settlemint-personal-access-token"),
        ("sm_pat_" + fake(16),), ("sm_pat_short", "sm_80"),
        rule_sets=("gitleaks:settlemint-application-access-token", "gitleaks:settlemint-personal-access-token",
                   "gitleaks:settlemint-service-access-token"),
    ),
)
# fmt: on
