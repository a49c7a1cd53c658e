#!/usr/bin/php
<?php
/*
 * consumer.php: claim one job from mq's table with plain SQL, as
 * mq-sql(7) documents it, write its payload, and ack it; or fail it.
 *
 * usage: consumer.php [--queue Q] [--claim skip-locked|update] [--lease S]
 *                     [--output F] [--extend S] [--fail TEXT [--retry-in S]
 *                     [--no-retry]] [--wait-file F] [--lock-wait S]
 *                     [connection options]
 *
 * The payload goes to F (default: standard output), byte for byte, then
 * the job is acked. With --fail the job is failed instead, with TEXT as
 * its error: due again after --retry-in seconds (default: mq's backoff),
 * or dead with --no-retry or once its attempts are used up. --extend
 * moves the lease to S seconds from now before the work (a heartbeat).
 * --wait-file waits, once the job is claimed, until F exists (to show a
 * consumer whose lease ran out). The receipt (id.token) and what became
 * of the job go to standard error.
 *
 * Exit status: 0 done, 1 nothing to claim, 2 the lease was lost (the job
 * was requeued and claimed again, or finished: this consumer's ack or
 * fail changed nothing), 64 usage, 70 server error, 74 I/O error, 75
 * deadlocks or lock wait timeouts after retries, 78 not an mq table
 * (or no database selected, or statement logging this account cannot
 * turn to rows). --lock-wait:
 * a row lock is waited for S seconds (default 50, as mq), then retried.
 * Connection as producer.php. Debian: apt-get install php-cli php-mysql.
 */

/* The statements of mq-sql(7), word for word (t330 checks that they are
 * there). `mq_jobs` is the default table: run() puts the one asked for
 * in its place. */
const SQL_ROLLBACK = <<<'SQL'
ROLLBACK AND NO CHAIN NO RELEASE
SQL;
const SQL_SESSION = <<<'SQL'
SET SESSION autocommit = 1, SESSION completion_type = 0,
    SESSION sql_mode =
    'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION',
    SESSION time_zone = '+00:00', NAMES utf8mb4,
    SESSION innodb_lock_wait_timeout = ?, SESSION lock_wait_timeout = ?,
    SESSION wait_timeout = 28800, SESSION net_read_timeout = 30,
    SESSION net_write_timeout = 60,
    SESSION sql_select_limit = 18446744073709551615,
    SESSION max_join_size = 18446744073709551615,
    SESSION sql_safe_updates = 0, SESSION unique_checks = 1,
    SESSION sql_auto_is_null = 0, SESSION timestamp = DEFAULT,
    SESSION insert_id = 0, SESSION div_precision_increment = 4,
    SESSION optimizer_switch = 'default'
    /*M!100300 , SESSION max_statement_time = 0,
      SESSION idle_transaction_timeout = 0,
      SESSION idle_readonly_transaction_timeout = 0,
      SESSION idle_write_transaction_timeout = 0 */
    /*M!100201 , SESSION check_constraint_checks = 0 */
    /*!80000 , SESSION max_execution_time = 0 */
SQL;
const SQL_ISOLATION = <<<'SQL'
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE
SQL;
const SQL_DATABASE = <<<'SQL'
SELECT DATABASE()
SQL;
const SQL_DROP_TEMPORARY = <<<'SQL'
DROP TEMPORARY TABLE IF EXISTS `mq_jobs`, `mq_jobs_archive`,
  `mq_jobs_queues`, `mq_jobs_counts`, `mq_jobs_history`,
  `mq_jobs_waiters`
SQL;
const SQL_BINLOG = <<<'SQL'
SELECT IF(@@GLOBAL.log_bin AND @@SESSION.sql_log_bin,
          @@SESSION.binlog_format, 'NONE')
SQL;
const SQL_LOG_ROWS = <<<'SQL'
SET SESSION binlog_format = 'ROW'
SQL;
const SQL_VERSION = <<<'SQL'
SELECT TABLE_COMMENT FROM information_schema.TABLES
 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
SQL;
const SQL_CLAIM_SELECT = <<<'SQL'
SELECT id, queue, priority, attempts, payload
  FROM `mq_jobs` FORCE INDEX (claim)
 WHERE queue = ? AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)
   AND NOT EXISTS (SELECT 1 FROM `mq_jobs_queues`
                    WHERE queue = ? AND paused)
   AND EXISTS (SELECT 1 FROM `mq_jobs` FORCE INDEX (due)
                WHERE queue = ? AND state = 'ready'
                  AND available_at <= UTC_TIMESTAMP(6))
 ORDER BY priority, available_at, id LIMIT ?
   FOR UPDATE SKIP LOCKED
SQL;
const SQL_CLAIM_LEASE = <<<'SQL'
UPDATE `mq_jobs` SET state = 'leased',
       attempts = LEAST(attempts, 4294967294) + 1,
       max_attempts = GREATEST(max_attempts, attempts),
       lease_token = ?,
       leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       leased_by = ?
 WHERE id IN (?)
SQL;
const SQL_ANY_DUE = <<<'SQL'
SELECT EXISTS (SELECT 1 FROM `mq_jobs` FORCE INDEX (due)
                WHERE queue = ? AND state = 'ready'
                  AND available_at <= UTC_TIMESTAMP(6))
SQL;
const SQL_CLAIM_UPDATE = <<<'SQL'
UPDATE `mq_jobs` FORCE INDEX (claim) SET state = 'leased',
       attempts = LEAST(attempts, 4294967294) + 1,
       max_attempts = GREATEST(max_attempts, attempts),
       lease_token = ?,
       leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       leased_by = ?
 WHERE queue = ? AND state = 'ready' AND available_at <= UTC_TIMESTAMP(6)
   AND NOT EXISTS (SELECT 1 FROM `mq_jobs_queues`
                    WHERE queue = ? AND paused)
 ORDER BY priority, available_at, id LIMIT ?
SQL;
const SQL_CLAIM_READ = <<<'SQL'
SELECT id, queue, priority, attempts, payload
  FROM `mq_jobs` FORCE INDEX (claim)
 WHERE queue = ? AND state = 'leased' AND lease_token = ?
 ORDER BY priority, available_at, id
SQL;
const SQL_ACK = <<<'SQL'
UPDATE `mq_jobs` SET
 state = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor))
   AND every_us <=
   TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), '9999-12-31 23:59:59')),
   'ready', 'done'),
 finished_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), NULL, UTC_TIMESTAMP(6)),
 available_at = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')),
   every_anchor + INTERVAL IF(TIMESTAMPDIFF(MICROSECOND, every_anchor,
   UTC_TIMESTAMP(6)) < 0, 0,
   TIMESTAMPDIFF(MICROSECOND, every_anchor, UTC_TIMESTAMP(6))
   DIV every_us + 1) * every_us
   MICROSECOND, available_at),
 attempts = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), 0, attempts),
 leased_until = NULL,
 every_us = IF((every_us > 0 AND every_anchor >= '1000-01-01' AND
   MONTH(every_anchor) > 0 AND DAYOFMONTH(every_anchor) > 0 AND
   DAYOFMONTH(every_anchor) <= DAYOFMONTH(LAST_DAY(every_anchor)) AND
   every_us <= TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
   '9999-12-31 23:59:59')), every_us, NULL),
 every_anchor = IF(every_us IS NULL, NULL, every_anchor)
 WHERE id = ? AND lease_token = ? AND state = 'leased'
SQL;
// The counts' slot is CONNECTION_ID() % 16 plus this: any slot keeps the
// counts exact; mq adds 16 times its Galera node's index (0 on one
// server) so that two nodes never write one count row (mq(1) GALERA).
const SLOT_BASE = 0;

const SQL_COUNT_FINISHED = <<<'SQL'
INSERT INTO `mq_jobs_counts` (queue, state, slot, n, total)
SELECT queue, COALESCE(?, CAST(state AS CHAR)), CONNECTION_ID() % 16 + ?,
       ? * COUNT(*), IF(? > 0, COUNT(*), 0)
  FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE state IN ('done', 'dead') AND id IN (?)
 GROUP BY queue, state ORDER BY queue, state
ON DUPLICATE KEY UPDATE n = n + VALUES(n), total = total + VALUES(total)
SQL;
const SQL_LOCK = <<<'SQL'
SELECT attempts, max_attempts FROM `mq_jobs`
 WHERE id = ? AND lease_token = ? AND state = 'leased' FOR UPDATE
SQL;
const SQL_RETRY = <<<'SQL'
UPDATE `mq_jobs` SET state = 'ready', leased_until = NULL,
       available_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
       last_error = COALESCE(?, last_error)
 WHERE id = ?
SQL;
const SQL_BURY = <<<'SQL'
UPDATE `mq_jobs` SET state = 'dead', leased_until = NULL,
       finished_at = UTC_TIMESTAMP(6),
       last_error = COALESCE(?, last_error)
 WHERE id = ?
SQL;
const SQL_HISTORY = <<<'SQL'
INSERT INTO `mq_jobs_history`
       (job_id, event, state, attempt, at, worker, error)
SELECT id, ?, IF(state = 'dead', 'dead', 'ready'), attempts,
       UTC_TIMESTAMP(6), leased_by, ?
  FROM `mq_jobs` FORCE INDEX (PRIMARY) WHERE id IN (?) ORDER BY id
SQL;
const SQL_COUNT_EVENT = <<<'SQL'
INSERT INTO `mq_jobs_counts` (queue, state, slot, n, total)
SELECT queue, ?, CONNECTION_ID() % 16 + ?, COUNT(*), COUNT(*)
  FROM `mq_jobs` FORCE INDEX (PRIMARY)
 WHERE (? IS NULL OR queue = ?) AND id IN (?)
 GROUP BY queue ORDER BY queue
ON DUPLICATE KEY UPDATE n = n + VALUES(n), total = total + VALUES(total)
SQL;
const SQL_EXTEND = <<<'SQL'
UPDATE `mq_jobs` SET leased_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
 WHERE id = ?
SQL;

/* the first schema these statements are right for */
const SCHEMA_MIN = 7;
const RETRIES = 8;	/* tries of a transaction that met 1213 or 1205 */
const ERROR_MAX = 4096;	/* bytes of error text kept, as mq keeps */

/* an error to report in one line; its code is the exit status */
class Fail extends Exception {}

function usage(string $why): never
{
	fwrite(STDERR, "consumer.php: $why\n");
	exit(64);
}

function options(): array
{
	$env = fn($k, $d = null) => getenv($k) === false ? $d : getenv($k);
	$o = ['queue' => $env('MQ_QUEUE', 'default'), 'claim' => 'skip-locked',
	    'lease' => 300.0, 'output' => null, 'extend' => null,
	    'fail' => null, 'retry-in' => null, 'no-retry' => false,
	    'wait-file' => null, 'lock-wait' => 50,
	    'socket' => $env('MQ_SOCKET'), 'host' => $env('MQ_HOST'),
	    'port' => $env('MQ_PORT'), 'user' => $env('MQ_USER', $env('USER')),
	    'database' => $env('MQ_DATABASE'),
	    'table' => $env('MQ_TABLE', 'mq_jobs')];
	$args = array_slice($_SERVER['argv'], 1);
	while ($args) {
		$a = array_shift($args);
		$k = substr($a, 2);
		if ($a === '--no-retry')
			$o['no-retry'] = true;
		elseif (str_starts_with($a, '--') && array_key_exists($k, $o) &&
		    $args)
			$o[$k] = array_shift($args);
		else
			usage("unknown option or missing value: $a");
	}
	if (!preg_match('/^[A-Za-z0-9_]{1,64}$/D', $o['table']) ||
	    ctype_digit($o['table']) ||
	    !preg_match('/^[A-Za-z0-9_.-]{1,64}$/D', $o['queue']))
		usage('invalid table or queue name');
	/* it goes in a USE (and the DSN): letters, digits, _ $ - */
	if (!preg_match('/^[A-Za-z0-9_$-]{0,64}$/D', (string)$o['database']))
		usage('invalid database name');
	if (!in_array($o['claim'], ['skip-locked', 'update']))
		usage('--claim is skip-locked or update');
	if ((float)$o['lease'] <= 0 ||
	    ($o['extend'] !== null && (float)$o['extend'] <= 0))
		usage('a lease is positive');
	if (!ctype_digit((string)$o['lock-wait']) || (int)$o['lock-wait'] < 1 ||
	    (int)$o['lock-wait'] > 3600)
		usage('--lock-wait takes 1 to 3600 seconds');
	return $o;
}

/* Runs sql for table with its parameters, each bound by its PHP type
 * (strings as bytes: the payload and the error text are binary). */
function run(PDO $db, string $sql, string $table, array $args): PDOStatement
{
	$st = $db->prepare(str_replace('`mq_jobs', "`$table", $sql));
	foreach (array_values($args) as $i => $v)
		$st->bindValue($i + 1, $v, is_int($v) ? PDO::PARAM_INT :
		    (is_null($v) ? PDO::PARAM_NULL : PDO::PARAM_LOB));
	$st->execute();
	return $st;
}

function code(PDOException $e): int
{
	return (int)($e->errorInfo[1] ?? 0);
}

/* fn() in a transaction (or alone, autocommitted), again after a
 * deadlock or a lock wait timeout (a deadlock rolls the transaction
 * back, a timeout only its statement: roll back the rest), a bounded
 * number of times, with a jittered backoff. fn may throw Fail: rolled
 * back. */
function transaction(PDO $db, callable $fn, bool $autocommit = false)
{
	for ($try = 1;; $try++) {
		try {
			if (!$autocommit)
				$db->beginTransaction();
			$r = $fn();
			if (!$autocommit)
				$db->commit();
			return $r;
		} catch (Exception $e) {
			if ($db->inTransaction())
				$db->rollBack();
			if (!$e instanceof PDOException ||
			    !in_array(code($e), [1213, 1205]))
				throw $e;
			if ($try == RETRIES)
				throw new Fail('gave up after ' . RETRIES .
				    ' deadlocks or lock wait timeouts: ' .
				    $e->getMessage(), 75);
			usleep((int)(mt_rand(5000, 20000) * 2 ** ($try - 1)));
		}
	}
}

/* The session mq-sql(7) asks for (THE SESSION), whatever the server's
 * globals or the account's init_connect made it: autocommit on (else
 * every write is rolled back at disconnect), UTC, sql_mode, READ
 * COMMITTED, the limits, the CHECKs off; the database asked for (an
 * init_connect may have run USE), mq's tables and not temporary ones
 * that hide them; statement logging turned to rows. */
function session(PDO $db, array $o, int $lock_wait = 50): void
{
	$t = $o['table'];
	$want = (string)$o['database'];
	run($db, SQL_ROLLBACK, $t, []);
	run($db, SQL_SESSION, $t, [$lock_wait, 60]);
	run($db, SQL_ISOLATION, $t, []);
	$current = run($db, SQL_DATABASE, $t, [])->fetchColumn();
	/* PDO has no select_db: USE, the name checked by options() */
	if ($want !== '' && $current !== $want)
		$db->exec("USE `$want`");
	elseif ($want === '' && $current === null)
		throw new Fail('no database selected: give --database or set ' .
		    'MQ_DATABASE', 78);
	run($db, SQL_DROP_TEMPORARY, $t, []);
	if (run($db, SQL_BINLOG, $t, [])->fetchColumn() !== 'STATEMENT')
		return;
	try {
		run($db, SQL_LOG_ROWS, $t, []);
	} catch (PDOException $e) {
		throw new Fail('the server logs statements (binlog_format=' .
		    'STATEMENT), which InnoDB refuses for READ COMMITTED ' .
		    'transactions, and this account cannot log rows instead (' .
		    ($e->errorInfo[2] ?? $e->getMessage()) . '): set ' .
		    'binlog_format=ROW or MIXED, or grant BINLOG ADMIN', 78);
	}
}

function connect(array $o): PDO
{
	$dsn = 'mysql:' . ($o['socket'] ? "unix_socket={$o['socket']}" :
	    'host=' . ($o['host'] ?? 'localhost') . ';port=' .
	    ($o['port'] ?? 3306)) . ";dbname={$o['database']};charset=utf8mb4";
	/* real prepared statements: the server gets the text with its ?
	 * and the values apart, bytes as bytes */
	$db = new PDO($dsn, $o['user'], getenv('MYSQL_PWD') ?: '', [
	    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
	    PDO::ATTR_EMULATE_PREPARES => false]);
	session($db, $o, (int)$o['lock-wait']);
	if (($tz = getenv('MQ_EXAMPLE_TIME_ZONE')) !== false && $tz !== '')
		run($db, 'SET time_zone = ?', $o['table'], [$tz]);
	$v = run($db, SQL_VERSION, $o['table'], [$o['table']])->fetchColumn();
	/* newer schemas only add: these statements stay right there */
	if (!preg_match('/^mq schema (\d+)$/', (string)$v, $m) ||
	    (int)$m[1] < SCHEMA_MIN)
		throw new Fail("table '{$o['table']}' is not an mq table of " .
		    'schema ' . SCHEMA_MIN . " or later: run 'mq init'", 78);
	return $db;
}

/* The lease holder as mq writes it (mq-sql(7), CLAIMING A JOB): the
 * host name, its first 199 bytes, each byte outside '!' to '~' as '?'
 * (leased_by is ASCII: a UTF-8 host name made every claim fail with
 * 1366), then ':' and the process id; 255 characters at most. */
function leased_by(): string
{
	$host = gethostname();
	$host = $host === false ? 'unknown' :
	    preg_replace('/[^\x21-\x7e]/', '?', substr($host, 0, 199));
	return substr($host . ':' . getmypid(), 0, 255);
}

/* [id, attempt, payload] of the job claimed with token, or null */
function claim(PDO $db, array $o, string $token): ?array
{
	$t = $o['table'];
	$q = $o['queue'];
	$lease = (int)round((float)$o['lease'] * 1e6);
	$worker = leased_by();
	if ($o['claim'] === 'skip-locked')
		return transaction($db, function () use ($db, $t, $q, $lease,
		    $worker, $token) {
			$row = run($db, SQL_CLAIM_SELECT, $t, [$q, $q, $q, 1])
			    ->fetch(PDO::FETCH_NUM);
			if ($row === false)
				return null;
			$n = run($db, SQL_CLAIM_LEASE, $t, [$token, $lease,
			    $worker, (int)$row[0]])->rowCount();
			if ($n != 1)
				throw new Fail("claim leased $n of 1 rows", 70);
			/* attempts as read before the claim's + 1 */
			return [(int)$row[0], (int)$row[3] + 1, $row[4]];
		});
	$n = transaction($db, function () use ($db, $t, $q, $lease, $worker,
	    $token) {
		/* its own statement: the UPDATE may not read its own table */
		if (!run($db, SQL_ANY_DUE, $t, [$q])->fetchColumn())
			return 0;
		return run($db, SQL_CLAIM_UPDATE, $t, [$token, $lease, $worker,
		    $q, $q, 1])->rowCount();
	}, true);
	if ($n == 0)
		return null;
	/* committed: the job is ours until the lease ends */
	$row = run($db, SQL_CLAIM_READ, $t, [$q, $token])
	    ->fetch(PDO::FETCH_NUM);
	return [(int)$row[0], (int)$row[3], $row[4]];
}

function lost(int $id): Fail
{
	return new Fail("job $id: lease lost (the job was requeued and " .
	    'claimed again, or finished): nothing changed', 2);
}

function ack(PDO $db, array $o, int $id, string $token): void
{
	$t = $o['table'];
	transaction($db, function () use ($db, $t, $id, $token) {
		if (run($db, SQL_ACK, $t, [$id, $token])->rowCount() != 1)
			throw lost($id);
		/* the job and its count commit together: mq stats stays
		 * exact */
		run($db, SQL_COUNT_FINISHED, $t, [null, SLOT_BASE, 1, 1, $id]);
	});
}

/* mq's: 10 s doubling per attempt, at most 1 h, times [0.75, 1.25) */
function backoff_us(int $attempts): int
{
	$base = min(10000000 << min(max($attempts - 1, 0), 9), 3600000000);
	return (int)($base * (0.75 + 0.5 * mt_rand() / (mt_getrandmax() + 1)));
}

function fail(PDO $db, array $o, int $id, string $token, string $error):
    string
{
	$t = $o['table'];
	$error = substr($error, 0, ERROR_MAX);
	return transaction($db, function () use ($db, $o, $t, $id, $token,
	    $error) {
		$row = run($db, SQL_LOCK, $t, [$id, $token])
		    ->fetch(PDO::FETCH_NUM);
		if ($row === false)
			throw lost($id);
		[$attempts, $max] = [(int)$row[0], (int)$row[1]];
		if ($o['no-retry'] || $attempts >= $max) {
			run($db, SQL_BURY, $t, [$error, $id]);
			run($db, SQL_HISTORY, $t, ['failed', $error, $id]);
			run($db, SQL_COUNT_FINISHED, $t, [null, SLOT_BASE, 1, 1, $id]);
			return "dead after attempt $attempts";
		}
		$delay = $o['retry-in'] !== null ?
		    (int)round((float)$o['retry-in'] * 1e6) :
		    backoff_us($attempts);
		run($db, SQL_RETRY, $t, [$delay, $error, $id]);
		run($db, SQL_HISTORY, $t, ['failed', $error, $id]);
		run($db, SQL_COUNT_EVENT, $t,
		    ['failed', SLOT_BASE, null, null, $id]);
		return sprintf('due again in %.3fs (after attempt %d)',
		    $delay / 1e6, $attempts);
	});
}

function extend(PDO $db, array $o, int $id, string $token): void
{
	$t = $o['table'];
	$lease = (int)round((float)$o['extend'] * 1e6);
	transaction($db, function () use ($db, $t, $id, $token, $lease) {
		if (run($db, SQL_LOCK, $t, [$id, $token])->fetch() === false)
			throw lost($id);
		run($db, SQL_EXTEND, $t, [$lease, $id]);
	});
}

$o = options();
try {
	$db = connect($o);
	/* 128 random bits, lowercase hex */
	$token = bin2hex(random_bytes(16));
	$job = claim($db, $o, $token);
	if ($job === null) {
		fwrite(STDERR, "consumer.php: queue {$o['queue']}: " .
		    "nothing to claim\n");
		exit(1);
	}
	[$id, $attempt, $payload] = $job;
	fwrite(STDERR, "consumer.php: claimed job $id, attempt $attempt, " .
	    "receipt $id.$token\n");
	while ($o['wait-file'] !== null && !file_exists($o['wait-file']))
		usleep(20000);
	if ($o['extend'] !== null)
		extend($db, $o, $id, $token);
	if ($o['fail'] !== null) {
		$what = fail($db, $o, $id, $token, $o['fail']);
		fwrite(STDERR, "consumer.php: job $id: $what\n");
		exit(0);
	}
	if (file_put_contents($o['output'] ?? 'php://stdout', $payload) !==
	    strlen($payload))
		throw new Fail('cannot write the payload', 74);
	ack($db, $o, $id, $token);
	fwrite(STDERR, "consumer.php: job $id: acked\n");
	exit(0);
} catch (Fail $e) {
	fwrite(STDERR, 'consumer.php: ' . $e->getMessage() . "\n");
	exit($e->getCode());
} catch (PDOException $e) {
	fwrite(STDERR, 'consumer.php: ' . $e->getMessage() . "\n");
	exit(70);
}
