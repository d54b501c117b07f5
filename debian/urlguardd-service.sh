#!/bin/sh
# Writes the packaged unit (stdout) from the upstream packaging/urlguardd.service (the one sandbox definition):
#   - ExecStart runs /usr/bin/urlguardd with the settings of the conffile /etc/urlguard/urlguardd.conf
#     (EnvironmentFile=; ${VAR} is one argument, $VAR is split on spaces);
#   - the static system user urlguard (created by postinst, owner of /var/lib/urlguard) instead of DynamicUser;
#   - Documentation= names the package's README.Debian.
# Fails when the upstream unit no longer has the lines it rewrites.
set -eu
unit=$1
for pattern in '^ExecStart=/usr/local/bin/urlguardd ' '^DynamicUser=yes$' '^Documentation=' '^StateDirectory=urlguard$'; do
    grep -q "$pattern" "$unit" || { echo "$0: $unit: no line matches '$pattern'" >&2; exit 1; }
done
awk '
    /^Documentation=/ { print "Documentation=file:///usr/share/doc/urlguardd/README.Debian"; next }
    /^ExecStart=/ { skipping = 1 }
    skipping {
        if ($0 !~ /\\$/) {
            skipping = 0
            print "EnvironmentFile=/etc/urlguard/urlguardd.conf"
            print "ExecStart=/usr/bin/urlguardd --data-dir /var/lib/urlguard --server ${URLGUARD_SERVER} \\"
            print "          --public-key ${URLGUARD_PUBLIC_KEY} --listen ${URLGUARD_LISTEN} $URLGUARDD_OPTS"
        }
        next
    }
    /^DynamicUser=yes$/ { print "User=urlguard"; print "Group=urlguard"; next }
    { print }
' "$unit"
