#!/bin/sh
# mq pop, under both claim strategies: order, counts, leases, tokens,
# and the three output forms byte for byte.
. "$(dirname "$0")/lib.sh"
"$MQ" init >/dev/null

for claim in skip-locked update; do
  q=q_$(printf '%s' "$claim" | tr -c 'a-z' _)
  # order: priority, then due time, then id
  a=$("$MQ" push --queue "$q" --priority 5 a)
  b=$("$MQ" push --queue "$q" --priority 1 --at '2020-01-01 00:00:02' b)
  c=$("$MQ" push --queue "$q" --priority 1 --at '2020-01-01 00:00:01' c)
  d=$("$MQ" push --queue "$q" --priority 1 --at '2020-01-01 00:00:01' d)
  e=$("$MQ" push --queue "$q" --priority -3 --delay 1h e)
  got=
  for i in 1 2 3 4; do
    got="$got$("$MQ" pop --claim "$claim" --queue "$q" --json | sed 's/.*"id":\([0-9]*\),.*/\1/') "
  done
  is "$got" "$c $d $b $a " "$claim: priority, due time, id order; scheduled job skipped"
  expect_status 1 "$claim: empty queue exits 1" "$MQ" pop --claim "$claim" --queue "$q"
  is "$OUT$ERR" "" "$claim: empty queue prints nothing"

  # the claim writes lease, token, owner, attempts
  sql "DELETE FROM mq_jobs WHERE queue = '$q'"
  id=$("$MQ" push --queue "$q" payload)
  run "$MQ" pop --claim "$claim" --queue "$q" --lease 90s --shell
  is "$RC" 0 "$claim: pop --shell"
  eval "$OUT"
  is "$MQ_ID" "$id" "$claim: MQ_ID"
  is "$MQ_QUEUE" "$q" "$claim: MQ_QUEUE"
  is "$MQ_ATTEMPT" 1 "$claim: MQ_ATTEMPT"
  is "$MQ_PAYLOAD" payload "$claim: MQ_PAYLOAD"
  like "$(sql "SELECT CONCAT_WS(',', state, attempts, CONCAT(id, '.', lease_token), leased_by, TIMESTAMPDIFF(SECOND, NOW(6), leased_until) BETWEEN 85 AND 90) FROM mq_jobs WHERE id = $id")" \
    "leased,1,$MQ_RECEIPT,*:[0-9]*,1" "$claim: row leased ~90s by host:pid with the receipt's token"
  expect_status 1 "$claim: a leased job is not claimed again" "$MQ" pop --claim "$claim" --queue "$q"

  # expired lease, made due again: a new claim gets a new token
  sql "UPDATE mq_jobs SET state = 'ready', leased_until = NULL WHERE id = $id"
  eval "$("$MQ" pop --claim "$claim" --queue "$q" --shell | sed 's/^MQ_/NEW_/')"
  is "$NEW_ATTEMPT" 2 "$claim: second delivery has attempt 2"
  check "$claim: second delivery has a fresh token" test "$NEW_RECEIPT" != "$MQ_RECEIPT"

  # --count
  sql "DELETE FROM mq_jobs WHERE queue = '$q'"
  printf '1\n2\n3\n4\n5\n' | "$MQ" push --lines --queue "$q" >/dev/null
  run "$MQ" pop --claim "$claim" --queue "$q" --count 3 --json
  is "$(printf '%s\n' "$OUT" | wc -l)" 3 "$claim: --count 3 claims 3"
  run "$MQ" pop --claim "$claim" --queue "$q" --count 3 --shell
  eval "$OUT"
  is "$MQ_COUNT:$MQ_PAYLOAD_1:$MQ_PAYLOAD_2" "2:4:5" "$claim: --count 3 gets the 2 left, numbered"
  is "$(sql "SELECT COUNT(*) FROM mq_jobs WHERE queue = '$q' AND state = 'leased'")" 5 \
    "$claim: all 5 leased"
done

# output forms, byte for byte
printf 'x\000y\377z' >"$T_TMP/bin"
"$MQ" push --queue bin <"$T_TMP/bin" >/dev/null
run "$MQ" pop --queue bin -o "$T_TMP/got"
is "$RC" 0 "pop -o FILE"
like "$OUT" "[0-9]*.[0-9a-f]*" "receipt on stdout"
check "NUL and 0xFF round-trip byte for byte" cmp -s "$T_TMP/bin" "$T_TMP/got"

"$MQ" push --queue raw 'raw payload' >/dev/null
"$MQ" pop --queue raw >"$T_TMP/raw" 2>"$T_TMP/receipt"
is "$(cat "$T_TMP/raw")" "raw payload" "raw form: payload on stdout"
like "$(cat "$T_TMP/receipt")" "[0-9]*.????????????????????????????????" "raw form: receipt on stderr"
"$MQ" push --queue raw 'raw 2' >/dev/null
"$MQ" pop --queue raw --receipt-file "$T_TMP/rf" >"$T_TMP/raw" 2>"$T_TMP/err"
is "$(cat "$T_TMP/raw"):$(cat "$T_TMP/err")" "raw 2:" "--receipt-file: payload alone on stdout, stderr empty"
check "--receipt-file holds an ackable receipt" "$MQ" ack "$(cat "$T_TMP/rf")"

head -c 1048576 /dev/urandom >"$T_TMP/big"
"$MQ" push --queue big <"$T_TMP/big" >/dev/null
"$MQ" pop --queue big -o "$T_TMP/big.out" >/dev/null
check "1 MiB random payload round-trips" cmp -s "$T_TMP/big" "$T_TMP/big.out"

# JSON: valid UTF-8 as text, anything else base64
printf 'caf\303\251 "q" \\ \n\t\001' | "$MQ" push --queue json >/dev/null
printf 'bad \377\376 utf8' | "$MQ" push --queue json >/dev/null
"$MQ" pop --queue json --count 2 --json >"$T_TMP/json"
is "$(python3 -c '
import json, sys, base64
out = []
for line in open(sys.argv[1], "rb"):
    o = json.loads(line)
    if "payload" in o:
        out.append(o["payload"].encode("utf-8").hex())
    else:
        out.append("b64:" + base64.b64decode(o["payload_base64"]).hex())
print(" ".join(out))' "$T_TMP/json")" \
  "$(printf 'caf\303\251 "q" \\ \n\t\001' | od -An -tx1 | tr -d ' \n') b64:$(printf 'bad \377\376 utf8' | od -An -tx1 | tr -d ' \n')" \
  "--json: UTF-8 as a string, other bytes base64, both exact"

# --shell: quotes survive eval; NUL goes base64
printf "it's \$(touch $T_TMP/pwned) \`x\` \"y\"\nz" | "$MQ" push --queue sh >/dev/null
eval "$("$MQ" pop --queue sh --shell)"
is "$MQ_PAYLOAD" "$(printf "it's \$(touch $T_TMP/pwned) \`x\` \"y\"\nz")" "--shell quoting survives eval"
check "--shell payload was not executed" test ! -e "$T_TMP/pwned"
printf 'a\000b' | "$MQ" push --queue sh >/dev/null
eval "$("$MQ" pop --queue sh --shell)"
is "$MQ_PAYLOAD_BASE64" "YQBi" "--shell: NUL payload comes as MQ_PAYLOAD_BASE64"

# refusals
expect_status 64 "raw form with --count 2" "$MQ" pop --count 2
expect_status 64 "--shell with --json" "$MQ" pop --shell --json
expect_status 64 "bad --claim" "$MQ" pop --claim nowait
# An UPDATE claim over a list commits queue by queue: jobs it leased in
# the first queue are handed out even when the next queue's UPDATE then
# fails (here: waits on a row another session locks, 1205 after every
# retry). Before: exit 75, and the first queue's job held by nobody
# until its lease ran out.
"$MQ" push --queue ul_b held >/dev/null
"$MQ" push --queue ul_a first >/dev/null
hid=$(sql "SELECT id FROM mq_jobs WHERE queue = 'ul_b'")
mariadb --no-defaults --socket="$MQ_SOCKET" -uroot "$T_DB" -e "SET SESSION
  TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN; SELECT id FROM mq_jobs
  WHERE id = $hid FOR UPDATE; SELECT SLEEP(30)" >/dev/null 2>&1 &
locker=$!
i=0
until [ "$(sql_root "SELECT COUNT(*) FROM information_schema.INNODB_TRX t
    JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
    WHERE p.DB = '$T_DB' AND p.INFO LIKE 'SELECT SLEEP(30)%'")" = 1 ] ||
    [ $i -ge 100 ]; do
  sleep 0.1; i=$((i + 1))
done
out=$("$MQ" pop --claim update --queue ul_a,ul_b --count 2 --wait 1s \
  --json 2>"$T_TMP/ul.err")
is "$?" 0 "update claim, a later queue's lock wait fails: exit 0"
like "$out" '{"id":*"queue":"ul_a"*"payload":"first"}' \
  "the first queue's job is handed out"
is "$(sql "SELECT state FROM mq_jobs WHERE queue = 'ul_a'")" leased \
  "and leased"
is "$(sql "SELECT state, lease_token IS NULL FROM mq_jobs WHERE id = $hid")" \
  "$(printf 'ready\t1')" "the locked job is untouched"
is "$(cat "$T_TMP/ul.err")" "" "nothing on stderr"
kill "$locker" 2>/dev/null
wait "$locker" 2>/dev/null
expect_status 64 "bad --lease" "$MQ" pop --lease 0s
expect_status 64 "bad --count" "$MQ" pop --count 0
expect_status 64 "bad --queue" "$MQ" pop --queue 'x`y'
expect_status 64 "an operand" "$MQ" pop extra
done_testing
