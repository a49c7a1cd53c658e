#!/usr/bin/php
<?php
/*
 * producer.php: push one job into mq's table with plain SQL, as
 * mq-sql(7) documents it; mq work or mq pop runs it like any other.
 *
 * usage: producer.php [--queue Q] [--priority N] [--delay S]
 *                     [--max-attempts N] [--dedup KEY] [--every S]
 *                     [--wake] [--file F] [connection options]
 *
 * The payload is the bytes of F, or of standard input, byte for byte.
 * Prints the job's id (with --dedup, the live job's id if one holds the
 * key). Connection: --socket, --host, --port, --user, --database,
 * --table or MQ_SOCKET, MQ_HOST, MQ_PORT, MQ_USER, MQ_DATABASE, MQ_TABLE
 * (default mq_jobs), MQ_QUEUE (default "default"); the password from
 * MYSQL_PWD. MQ_EXAMPLE_TIME_ZONE sets the session's time zone: it
 * changes nothing.
 *
 * Debian: apt-get install php-cli php-mysql.
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
const SQL_PUSH = <<<'SQL'
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?)
SQL;
const SQL_PUSH_KEY = <<<'SQL'
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?)
SQL;
const SQL_PUSH_EVERY = <<<'SQL'
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key, every_us, every_anchor)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
SQL;
const SQL_LIVE_KEY = <<<'SQL'
SELECT id, queue FROM `mq_jobs`
 WHERE dedup_unique = CONCAT(?, '/', ?)
SQL;
const SQL_WAITERS = <<<'SQL'
SELECT ID FROM information_schema.PROCESSLIST
 WHERE DB = DATABASE() AND ID <> CONNECTION_ID()
   AND CAST(INFO AS BINARY) LIKE ? ESCAPE '!'
 ORDER BY TIME DESC, ID LIMIT ?
SQL;
const SQL_KILL = <<<'SQL'
KILL QUERY ?
SQL;

/* the first schema these statements are right for */
const SCHEMA_MIN = 8;
const RETRIES = 8;	/* tries of a statement that met 1213 or 1205 */

/* an error to report in one line; its code is the exit status */
class Fail extends Exception {}

function usage(string $why): never
{
	fwrite(STDERR, "producer.php: $why\n");
	exit(64);
}

function options(): array
{
	$env = fn($k, $d = null) => getenv($k) === false ? $d : getenv($k);
	$o = ['queue' => $env('MQ_QUEUE', 'default'), 'priority' => 0,
	    'delay' => 0.0, 'max-attempts' => 10, 'dedup' => null,
	    'every' => null, 'wake' => false, 'file' => null,
	    'socket' => $env('MQ_SOCKET'), 'host' => $env('MQ_HOST'),
	    'port' => $env('MQ_PORT'), 'user' => $env('MQ_USER', $env('USER')),
	    'database' => $env('MQ_DATABASE'),
	    'table' => $env('MQ_TABLE', 'mq_jobs')];
	$args = array_slice($_SERVER['argv'], 1);
	while ($args) {
		$a = array_shift($args);
		$k = substr($a, 2);
		if ($a === '--wake')
			$o['wake'] = true;
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
	if ($o['every'] !== null && (float)$o['every'] < 1)
		usage('--every takes 1 second or more');
	if ((float)$o['delay'] < 0 || (int)$o['max-attempts'] < 1)
		usage('invalid --delay or --max-attempts');
	return $o;
}

/* Runs sql for table with its parameters, each bound by its PHP type
 * (strings as bytes: the payload and the key are binary). */
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

/* fn() again after a deadlock or a lock wait timeout (a deadlock rolls
 * the transaction back, a timeout only its statement), a bounded number
 * of times, with a jittered backoff. */
function retried(callable $fn)
{
	for ($try = 1;; $try++) {
		try {
			return $fn();
		} catch (PDOException $e) {
			if (!in_array(code($e), [1213, 1205]))
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
	session($db, $o);
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

/* [id, existed]: the job's id, and whether a live job held the key */
function push(PDO $db, array $o, string $payload): array
{
	$t = $o['table'];
	$delay = (int)round((float)$o['delay'] * 1e6);
	$head = [$o['queue'], (int)$o['priority'], (int)$o['max-attempts'],
	    $delay, $payload];
	if ($o['every'] !== null) {
		$sql = SQL_PUSH_EVERY;
		$args = array_merge($head, [$o['dedup'],
		    (int)round((float)$o['every'] * 1e6), $delay]);
	} elseif ($o['dedup'] !== null) {
		$sql = SQL_PUSH_KEY;
		$args = array_merge($head, [$o['dedup']]);
	} else {
		[$sql, $args] = [SQL_PUSH, $head];
	}
	/* a duplicate key: the live job's id, unless it finished in between
	 * (the key is free again: insert again) */
	for ($i = 0; $i < 3; $i++) {
		try {
			retried(fn() => run($db, $sql, $t, $args));
			return [(int)$db->lastInsertId(), false];
		} catch (PDOException $e) {
			if (code($e) != 1062 || $o['dedup'] === null)
				throw $e;
		}
		$row = run($db, SQL_LIVE_KEY, $t, [$o['queue'], $o['dedup']])
		    ->fetch(PDO::FETCH_NUM);
		if ($row !== false && $row[1] !== $o['queue'])	/* a foreign row */
			throw new Fail("the dedup key is held by job $row[0], which "
			    . "is not of queue '{$o['queue']}'", 70);
		if ($row !== false)
			return [(int)$row[0], true];
	}
	throw new Fail('the dedup key is taken and freed too fast: try again',
	    75);
}

/* Optional: mq's waiters find the job within a second anyway. This ends
 * the marked sleep of one of them now (mq-sql(7), WAKING WAITERS);
 * seeing and ending another user's needs PROCESS and CONNECTION ADMIN. */
function wake(PDO $db, array $o): void
{
	$marker = "/* mq-wait `{$o['table']}` {$o['queue']} */";
	$pattern = '%' . preg_replace('/([_%!])/', '!$1', $marker) . '%';
	$ids = run($db, SQL_WAITERS, $o['table'], [$pattern, 1])
	    ->fetchAll(PDO::FETCH_COLUMN);
	foreach ($ids as $id) {
		try {
			run($db, SQL_KILL, $o['table'], [(int)$id]);
		} catch (PDOException $e) {
			if (code($e) != 1094)	/* it ended by itself */
				throw $e;
		}
	}
}

$o = options();
try {
	$payload = file_get_contents($o['file'] ?? 'php://stdin');
	if ($payload === false)
		throw new Fail('cannot read the payload', 74);
	$db = connect($o);
	[$id, $existed] = push($db, $o, $payload);
	if ($o['wake'] && !$existed && (float)$o['delay'] == 0)
		wake($db, $o);
	echo "$id\n";
	exit(0);
} catch (Fail $e) {
	fwrite(STDERR, 'producer.php: ' . $e->getMessage() . "\n");
	exit($e->getCode());
} catch (PDOException $e) {
	fwrite(STDERR, 'producer.php: ' . $e->getMessage() . "\n");
	exit(70);
}
