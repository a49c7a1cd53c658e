#!/bin/sh
# TLS: the --ssl-* options reach Connector/C. The test starts a second
# private server of its own, on 127.0.0.1 with a certificate from a
# throw-away CA; a user that REQUIREs SSL pushes and pops through it with
# the server's certificate verified. A wrong CA, or a certificate for
# another name, is refused (status 69) and changes nothing; option files
# carry the same settings.
. "$(dirname "$0")/lib.sh"

if ! command -v openssl >/dev/null 2>&1; then
  not_ok "openssl is installed (tests/deps.sh installs it)" \
    "openssl makes the test's CA and certificates; install it"
  done_testing
fi

# ---- a CA, a second unrelated one, and server certificates ----
# EC keys: quick to make. Minimal configs of our own: the host's
# openssl.cnf does not decide what the certificates hold.
C=$T_TMP/certs
mkdir "$C"
mk_ca() { # mk_ca NAME: self-signed CA in $C/NAME.pem, key in NAME-key.pem
  printf '%s\n' '[req]' 'distinguished_name = dn' 'prompt = no' \
    'x509_extensions = ext' '[dn]' "CN = mq test $1" '[ext]' \
    'basicConstraints = critical, CA:TRUE' \
    'keyUsage = critical, keyCertSign, cRLSign' \
    'subjectKeyIdentifier = hash' >"$C/$1.cnf"
  openssl req -x509 -config "$C/$1.cnf" -newkey ec \
    -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$C/$1-key.pem" -out "$C/$1.pem"
}
mk_cert() { # mk_cert NAME CN SERIAL USE [SAN]: a certificate from $C/ca.pem
  printf '%s\n' '[req]' 'distinguished_name = dn' 'prompt = no' '[dn]' \
    "CN = $2" >"$C/$1.cnf"
  printf '%s\n' '[ext]' 'basicConstraints = CA:FALSE' \
    'keyUsage = critical, digitalSignature' \
    "extendedKeyUsage = $4" ${5:+"subjectAltName = $5"} >"$C/$1-ext.cnf"
  openssl req -new -config "$C/$1.cnf" -newkey ec \
    -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$C/$1-key.pem" -out "$C/$1.csr" &&
    openssl x509 -req -in "$C/$1.csr" -CA "$C/ca.pem" \
      -CAkey "$C/ca-key.pem" -set_serial "$3" -days 2 \
      -extfile "$C/$1-ext.cnf" -extensions ext -out "$C/$1.pem"
}
{
  mk_ca ca && mk_ca other &&
    mk_cert server 127.0.0.1 2 serverAuth 'IP:127.0.0.1, DNS:localhost' &&
    mk_cert elsewhere db.example.com 3 serverAuth 'DNS:db.example.com' &&
    mk_cert client 'mq client' 4 clientAuth &&
    mkdir "$C/capath" "$C/othercapath" &&
    cp "$C/ca.pem" "$C/capath/$(openssl x509 -hash -noout -in "$C/ca.pem").0" &&
    cp "$C/other.pem" \
      "$C/othercapath/$(openssl x509 -hash -noout -in "$C/other.pem").0"
} >"$T_TMP/openssl.log" 2>&1 || {
  echo "Bail out! openssl cannot make the test certificates"
  sed 's/^/# /' "$T_TMP/openssl.log" | tail -n 20
  exit 1
}

# ---- the shared server offers no TLS: only the flag insists on it ----
"$MQ" init >/dev/null
if [ "$(sql_root "SELECT @@have_ssl")" != YES ]; then
  expect_status 0 "--ssl-ca alone, server without TLS: a plain connection" \
    "$MQ" stats --ssl-ca "$C/ca.pem"
  expect_status 69 "--ssl-verify-server-cert, server without TLS: status 69" \
    "$MQ" stats --ssl-ca "$C/ca.pem" --ssl-verify-server-cert
  like "$ERR" "mq stats: cannot connect: TLS/SSL error: *(error 2026, *" \
    "the message says so"
else
  ok "a server without TLS # SKIP the shared server has TLS"
fi

# ---- the TLS server: loopback only, on a free port ----
SRV=$T_TMP/srv
tls_args() { # tls_args CERT: the TLS options for mariadbd
  echo "--ssl-ca=$C/ca.pem --ssl-cert=$C/$1.pem --ssl-key=$C/$1-key.pem"
}
tls_cleanup() {
  [ ! -d "$SRV" ] || sh "$TESTS_DIR/server.sh" stop "$SRV"
  t_cleanup
}
trap tls_cleanup EXIT
# shellcheck disable=SC2046
if ! tcp_server "$SRV" $(tls_args server); then
  echo "Bail out! cannot start the TLS server"
  sed 's/^/# /' "$T_TMP/server.log" | tail -n 20
  exit 1
fi

# sql_tls "STATEMENT": as root on the TLS server, through its socket,
# without TLS (so that the server's TLS counters count mq alone)
sql_tls() {
  mariadb --no-defaults --socket="$SRV/sock" --user=root --skip-ssl -N -B \
    -e "$1"
}
accepts() { sql_tls "SHOW GLOBAL STATUS LIKE 'Ssl_accepts'" | cut -f2; }
sum_tls() { sql_tls "CHECKSUM TABLE mqtls.mq_jobs EXTENDED" | cut -f2; }

is "$(sql_tls "SELECT @@have_ssl")" YES "the second server has TLS on"
sql_tls "CREATE DATABASE mqtls;
  CREATE USER 'tls'@'127.0.0.1' IDENTIFIED BY 'tls-secret' REQUIRE SSL;
  GRANT ALL ON mqtls.* TO 'tls'@'127.0.0.1'" || {
  echo "Bail out! cannot create user tls on the TLS server"
  exit 1
}

# mq sees the TLS server only: its password from an option file, no socket
printf '[client]\npassword = tls-secret\n' >"$T_TMP/pw.cnf"
export MQ_DEFAULTS_FILE="$T_TMP/pw.cnf" MQ_SOCKET='' MQ_USER=tls \
  MQ_DATABASE=mqtls
TCP="--host 127.0.0.1 --port $PORT"
VERIFY="--ssl-ca $C/ca.pem --ssl-verify-server-cert"

# ---- TLS with verification: a job's round trip ----
# shellcheck disable=SC2086
{
  expect_status 0 "init over TLS, certificate verified" \
    "$MQ" init $TCP --user tls $VERIFY
  run "$MQ" push $TCP $VERIFY "over tls"
  id=$OUT
  like "$RC:$id" "0:[0-9]*" "push over TLS prints the job's id"
  n=$(accepts)
  run "$MQ" pop $TCP $VERIFY -o "$T_TMP/payload"
  r=$OUT
  like "$RC:$r" "0:$id.*" "pop over TLS claims it"
  is "$(cat "$T_TMP/payload")" "over tls" "the payload came back"
  is "$(accepts)" $((n + 1)) "the server accepted one TLS handshake for it"
  # global options go before the command name too
  expect_status 0 "ack over TLS, options before the command" \
    "$MQ" $TCP $VERIFY ack "$r"
  is "$(sql_tls "SELECT state FROM mqtls.mq_jobs WHERE id = '$id'")" "done" \
    "the job is done"
}

# the user REQUIREs SSL: whatever got in spoke TLS
run mariadb --no-defaults --host=127.0.0.1 --port="$PORT" --user=tls \
  --password=tls-secret --skip-ssl -e "SELECT 1"
like "$RC:$ERR" "1:*Access denied*" "a connection without TLS is refused"
run mariadb --no-defaults --host=127.0.0.1 --port="$PORT" --user=tls \
  --password=tls-secret --ssl-ca="$C/ca.pem" --ssl-verify-server-cert \
  -N -B -e "SHOW STATUS LIKE 'Ssl_cipher'"
like "$RC:$OUT" "0:Ssl_cipher	?*" "the mysql client with the CA gets a cipher"
# Connector/C 3.3 does not use TLS unless asked: mq without --ssl-* is
# refused as the plain client is
# shellcheck disable=SC2086
run "$MQ" pop $TCP
like "$RC:$ERR" "77:mq pop: cannot connect: Access denied*(error 1045, *" \
  "mq without TLS options is refused (77)"

# ---- refused: 69, one line naming the failure, nothing changed ----
# shellcheck disable=SC2086
"$MQ" push $TCP $VERIFY queued >/dev/null
sum=$(sum_tls)
# shellcheck disable=SC2086
{
  expect_status 69 "a wrong CA with --ssl-verify-server-cert: status 69" \
    "$MQ" pop $TCP --ssl-ca "$C/other.pem" --ssl-verify-server-cert
  like "$ERR" "mq pop: cannot connect: TLS/SSL error: *certificate* (error 2026, SQLSTATE HY000)" \
    "the message names the certificate failure"
  expect_status 69 "push with a wrong CA: status 69" \
    "$MQ" push $TCP --ssl-ca "$C/other.pem" --ssl-verify-server-cert x
  expect_status 69 "a wrong CA directory: status 69" \
    "$MQ" pop $TCP --ssl-capath "$C/othercapath" --ssl-verify-server-cert
  # a CA alone already checks the chain; the flag adds the name
  expect_status 69 "a wrong CA without the flag: status 69" \
    "$MQ" pop $TCP --ssl-ca "$C/other.pem"
  expect_status 69 "the flag without a CA: the system's CAs do not know ours" \
    "$MQ" pop $TCP --ssl-verify-server-cert
  expect_status 69 "an unreadable CA file: status 69" \
    "$MQ" pop $TCP --ssl-ca "$C/no-such.pem"
  expect_status 69 "a cipher list the library does not know: status 69" \
    "$MQ" pop $TCP $VERIFY --ssl-cipher NO-SUCH-CIPHER
  is "$(sum_tls)" "$sum" "the refused commands changed nothing"
  expect_status 64 "an empty --ssl-ca is a usage error" \
    "$MQ" pop $TCP --ssl-ca ''
  expect_status 64 "--ssl-verify-server-cert takes no value" \
    "$MQ" pop $TCP --ssl-verify-server-cert=1
}

# ---- the other options pass through ----
sql_tls "CREATE USER 'tlsx'@'127.0.0.1' IDENTIFIED BY 'tls-secret'
    REQUIRE SUBJECT '/CN=mq client' AND ISSUER '/CN=mq test ca';
  GRANT ALL ON mqtls.* TO 'tlsx'@'127.0.0.1'"
# shellcheck disable=SC2086
{
  expect_status 0 "--ssl-capath: a CA directory verifies too" \
    "$MQ" stats $TCP --ssl-capath "$C/capath" --ssl-verify-server-cert
  expect_status 0 "--ssl-cert and --ssl-key: a user that REQUIREs the client certificate" \
    "$MQ" stats $TCP --user tlsx $VERIFY --ssl-cert "$C/client.pem" \
    --ssl-key "$C/client-key.pem"
  expect_status 77 "the same user without the certificate is refused" \
    "$MQ" stats $TCP --user tlsx $VERIFY
  expect_status 0 "--ssl-cipher: a list the server shares" \
    "$MQ" stats $TCP $VERIFY --ssl-cipher ECDHE-ECDSA-AES128-GCM-SHA256
  # Connector/C 3.3 turns TLS on for any TLS option, unverified here
  expect_status 0 "a cipher list alone turns TLS on" \
    "$MQ" stats $TCP --ssl-cipher ECDHE-ECDSA-AES128-GCM-SHA256
}

# ---- option files: [mq] or [client], ssl-ca= and ssl-verify-server-cert ----
printf '[client]\npassword = tls-secret\n[mq]\nssl-ca = %s\nssl-verify-server-cert\n' \
  "$C/ca.pem" >"$T_TMP/good.cnf"
printf '[client]\npassword = tls-secret\nssl-ca = %s\nssl-verify-server-cert\n' \
  "$C/other.pem" >"$T_TMP/bad.cnf"
# shellcheck disable=SC2086
{
  run "$MQ" push $TCP --defaults-file "$T_TMP/good.cnf" "from the file"
  like "$RC:$OUT" "0:[0-9]*" "ssl-ca= and ssl-verify-server-cert in [mq] of --defaults-file"
  run env MQ_DEFAULTS_FILE="$T_TMP/good.cnf" "$MQ" pop $TCP --count 2 --json
  like "$RC:$OUT" "0:*\"from the file\"*" "the same through MQ_DEFAULTS_FILE"
  sum=$(sum_tls)
  expect_status 69 "a wrong CA in [client] of the file: status 69" \
    "$MQ" push $TCP --defaults-file "$T_TMP/bad.cnf" x
  like "$ERR" "*TLS/SSL error*(error 2026, *" "the message names the failure"
  # Connector/C reads the option files as it connects, after mq set the
  # options: a file's ssl-* wins (mq(1) says so)
  expect_status 69 "a file's ssl-ca wins over --ssl-ca" \
    "$MQ" push $TCP --defaults-file "$T_TMP/bad.cnf" --ssl-ca "$C/ca.pem" x
  is "$(sum_tls)" "$sum" "and nothing changed"
  # the file asks for TLS, so mq starts OpenSSL in full (lib/client_init.c):
  # its error texts are there for the library's message
  printf '[client]\npassword = tls-secret\n[mq]\nssl-ca = %s\n' \
    "$C/no-such.pem" >"$T_TMP/nofile.cnf"
  expect_status 69 "an option file's CA file that is not there: status 69" \
    "$MQ" pop $TCP --defaults-file "$T_TMP/nofile.cnf"
  case $ERR in
  *"SSL errno="*) not_ok "OpenSSL's text names the failure" "$ERR" ;;
  "mq pop: cannot connect: TLS/SSL error: "?*" (error 2026, "*) ok "OpenSSL's text names the failure" ;;
  *) not_ok "OpenSSL's text names the failure" "$ERR" ;;
  esac
}

# ---- a certificate for another name: only the flag checks the name ----
if MQ_SERVER_ARGS="--port=$PORT --bind-address=127.0.0.1 $(tls_args elsewhere)" \
  sh "$TESTS_DIR/server.sh" restart "$SRV" >"$T_TMP/server.log" 2>&1; then
  sum=$(sum_tls)
  # shellcheck disable=SC2086
  {
    expect_status 69 "a certificate for db.example.com, verified: status 69" \
      "$MQ" push $TCP $VERIFY x
    like "$ERR" "mq push: cannot connect: TLS/SSL error: *(error 2026, *" \
      "the message names the failure"
    is "$(sum_tls)" "$sum" "and nothing changed"
    expect_status 0 "the same with the CA alone: the chain is good" \
      "$MQ" stats $TCP --ssl-ca "$C/ca.pem"
  }
else
  not_ok "the TLS server restarts with another certificate" \
    "$(cat "$T_TMP/server.log")"
fi
done_testing
