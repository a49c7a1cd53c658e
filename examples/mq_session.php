<?php
/*
 * mq_session.php: what producer.php and consumer.php share: the session
 * mq-sql(7) asks for (THE SESSION), the connection and its options, the
 * schema check, and the retry of a deadlock or a lock wait timeout. They
 * require it from their own directory (__DIR__), whatever the current
 * one.
 *
 * Debian: apt-get install php-cli php-mysql.
 */

/* The statements of mq-sql(7), word for word (t330 checks that they are
 * there, in this file and the examples'). `mq_jobs` is the default
 * table: run() puts the one asked for in its place. */
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
  `mq_jobs_waiters`, `mq_jobs_gates`, `mq_jobs_ticks`,
  `mq_jobs_deps`, `mq_jobs_waits`, `mq_jobs_schedules`,
  `mq_jobs_fired`
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
const RETRIES = 8;	/* tries of a transaction that met 1213 or 1205 */

/* an error to report in one line; its code is the exit status */
class Fail extends Exception {}

function usage(string $name, string $why): never
{
	fwrite(STDERR, "$name: $why\n");
	exit(64);
}

/* The options: $o, the script's own with their defaults, and those of
 * the connection, from the environment by default; $flags, the options
 * that take no value. Refuses (64) a table, queue or database name mq
 * would not take: they end up in SQL text. */
function parse_options(string $name, array $o, array $flags): array
{
	/* a variable set to the empty string counts as unset, as for mq */
	$env = fn($k, $d = null) => (string)getenv($k) === '' ? $d : getenv($k);
	$o = ['queue' => $env('MQ_QUEUE', 'default')] + $o + [
	    'socket' => $env('MQ_SOCKET'), 'host' => $env('MQ_HOST'),
	    'port' => $env('MQ_PORT'), 'user' => $env('MQ_USER'),
	    'database' => $env('MQ_DATABASE'),
	    'table' => $env('MQ_TABLE', 'mq_jobs'),
	    'defaults-file' => $env('MQ_DEFAULTS_FILE')];
	$args = array_slice($_SERVER['argv'], 1);
	while ($args) {
		$a = array_shift($args);
		$k = substr($a, 2);
		if (in_array($a, $flags, true))
			$o[$k] = true;
		elseif (str_starts_with($a, '--') && array_key_exists($k, $o) &&
		    $args)
			$o[$k] = array_shift($args);
		else
			usage($name, "unknown option or missing value: $a");
	}
	if (!preg_match('/^[A-Za-z0-9_]{1,64}$/D', $o['table']) ||
	    ctype_digit($o['table']) ||
	    !preg_match('/^[A-Za-z0-9_.-]{1,64}$/D', $o['queue']))
		usage($name, 'invalid table or queue name');
	/* it goes in a USE (and the DSN): letters, digits, _ $ - */
	if (!preg_match('/^[A-Za-z0-9_$-]{0,64}$/D', (string)$o['database']))
		usage($name, 'invalid database name');
	return $o;
}

/* A connection (connect()): whether its server is a Galera node
 * (session(): wsrep on; MariaDB only, MySQL has no Galera here),
 * whether a statement ran in its transaction yet (run()), and the
 * database its session uses. */
class MqPDO extends PDO
{
	public bool $galera = false;
	public bool $ran = false;
	/* the database its session uses (session()) */
	public ?string $database = null;
}

/* Whether the server is a Galera node: 1 or 0 (MySQL: 0, which skips
 * what MariaDB alone reads). */
const GALERA = "SELECT 0 /*M! + (SELECT COUNT(*)
  FROM information_schema.GLOBAL_VARIABLES
 WHERE VARIABLE_NAME = 'WSREP_ON' AND VARIABLE_VALUE = 'ON') */";

/* Runs sql for table with its parameters, each bound by its PHP type
 * (strings as bytes: the payload, keys and error texts are binary).
 * On a Galera node, a brute-force abort (another node's write that
 * conflicts with the transaction's locks) that lands while the server
 * prepares a statement rolls the transaction back and loses its error:
 * the statements after it would run outside any transaction, each
 * committing by itself, and the COMMIT would commit nothing (mq-sql(7),
 * WHAT BREAKS THE CONTRACT). So there, after a prepare that follows
 * another statement of a transaction (the first has nothing to lose),
 * and before its execute, the server says whether the transaction is
 * still open; if not, that is the deadlock it should have reported:
 * error 1213, and transaction() runs the transaction again. */
function run(PDO $db, string $sql, string $table, array $args): PDOStatement
{
	/* in a transaction: the status of the server's last answer */
	$check = $db->galera && $db->ran && $db->inTransaction();
	$st = $db->prepare(str_replace('`mq_jobs', "`$table", $sql));
	if ($check)
		still_open($db);
	foreach (array_values($args) as $i => $v)
		$st->bindValue($i + 1, $v, is_int($v) ? PDO::PARAM_INT :
		    (is_null($v) ? PDO::PARAM_NULL : PDO::PARAM_LOB));
	$st->execute();
	$db->ran = true;
	return $st;
}

/* Error 1213 unless the server says the transaction is open (run()) */
function still_open(PDO $db): void
{
	/* the text protocol: one round trip, and no prepare of its own */
	$db->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);
	try {
		$open = $db->query('SELECT @@in_transaction')->fetchColumn();
	} finally {
		$db->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
	}
	if ((int)$open === 1)
		return;
	$why = 'the transaction was rolled back without an error (a ' .
	    'Galera brute-force abort)';
	$e = new PDOException("SQLSTATE[40001]: Serialization failure: 1213 $why");
	$e->errorInfo = ['40001', 1213, $why];
	throw $e;
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

/* fn() in a transaction (or alone, autocommitted), retried as retried()
 * says (what the failed try did is rolled back first). fn may throw
 * Fail: rolled back. */
function transaction(PDO $db, callable $fn, bool $autocommit = false)
{
	return retried(function () use ($db, $fn, $autocommit) {
		try {
			if (!$autocommit)
				$db->beginTransaction();
			$db->ran = false;
			$r = $fn();
			if (!$autocommit)
				$db->commit();
			return $r;
		} catch (Exception $e) {
			if ($db->inTransaction())
				$db->rollBack();
			throw $e;
		}
	});
}

/* The session mq-sql(7) asks for (THE SESSION), whatever the server's
 * globals or the account's init_connect made it: autocommit on (else
 * every write is rolled back at disconnect), UTC, sql_mode, READ
 * COMMITTED, the limits, the CHECKs off; the database asked for (an
 * init_connect may have run USE), mq's tables and not temporary ones
 * that hide them; statement logging turned to rows. And whether the
 * server is a Galera node (run()). */
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
		throw new Fail('no database selected: give --database, set ' .
		    'MQ_DATABASE or database= in an option file', 78);
	$db->database = $want !== '' ? $want : $current;
	run($db, SQL_DROP_TEMPORARY, $t, []);
	$db->galera = (int)run($db, GALERA, $t, [])->fetchColumn() === 1;
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

/* The option files mq reads (mq(1), OPTION FILES), in its order, and the
 * groups it reads in them. PDO's PDO::MYSQL_ATTR_READ_DEFAULT_FILE and
 * _GROUP exist only with libmysqlclient, not with mysqlnd (Debian's
 * php-mysql), so the files are read here, as Connector/C reads them for
 * mq, and what they say goes into the DSN. */
const GROUPS = ['client', 'client-server', 'client-mariadb', 'mq'];
const SETTINGS = ['host', 'port', 'socket', 'user', 'password', 'database'];

function default_files(): array
{
	$files = ['/etc/my.cnf', '/etc/mysql/my.cnf'];
	$home = (string)getenv('MARIADB_HOME') !== '' ? getenv('MARIADB_HOME') :
	    getenv('MYSQL_HOME');
	if ((string)$home !== '')
		$files[] = "$home/my.cnf";
	if ((string)getenv('HOME') !== '')
		$files[] = getenv('HOME') . '/.my.cnf';
	return $files;
}

/* An option's value as Connector/C reads it: quoted, the text between
 * the quotes with its escapes; else up to a '#'. */
function unquote(string $v): string
{
	if (strlen($v) >= 2 && ($v[0] === '"' || $v[0] === "'") &&
	    $v[-1] === $v[0])
		$v = substr($v, 1, -1);
	else
		$v = rtrim(explode('#', $v, 2)[0]);
	$esc = ['n' => "\n", 't' => "\t", 'r' => "\r", 'b' => "\x08",
	    's' => ' ', '\\' => '\\', "'" => "'", '"' => '"'];
	return preg_replace_callback('/\\\\(.)/s',
	    fn($m) => $esc[$m[1]] ?? '\\' . $m[1], $v);
}

/* $found updated with the settings of mq's groups in $path (and the
 * files it includes); why $path cannot be read, or null. */
function read_option_file(string $path, array &$found, int $depth = 0): ?string
{
	if (is_dir($path))
		return 'a directory';
	/* a pipe (--defaults-file <(...)): PHP resolves /dev/fd/N to
	 * "pipe:[...]", which it cannot open; php://fd/N is that pipe */
	$open = preg_match('#^/(dev|proc/self)/fd/([0-9]+)$#D', $path, $m) ?
	    "php://fd/$m[2]" : ($path === '/dev/stdin' ? 'php://stdin' : $path);
	$f = @fopen($open, 'rb');
	$text = $f === false ? false : stream_get_contents($f, 1 << 20);
	if ($f !== false)
		fclose($f);
	if ($text === false)
		return is_readable($path) ? 'cannot read it' : (file_exists($path) ?
		    'Permission denied' : 'No such file or directory');
	$ours = false;
	foreach (preg_split('/\r?\n/', $text) as $line) {
		$s = trim($line);
		if ($s === '' || $s[0] === '#' || $s[0] === ';')
			continue;
		if (str_starts_with($s, '!include') && $depth < 10) {
			$w = preg_split('/\s+/', $s, 2);
			$arg = trim($w[1] ?? '');
			if ($w[0] === '!include')
				read_option_file($arg, $found, $depth + 1);
			elseif ($w[0] === '!includedir')	/* DIR/my.cnf only */
				read_option_file("$arg/my.cnf", $found, $depth + 1);
			continue;
		}
		if ($s[0] === '[') {
			$ours = in_array(strtolower(trim(explode(']',
			    substr($s, 1), 2)[0])), GROUPS, true);
			continue;
		}
		$kv = explode('=', $s, 2);
		$key = str_replace('_', '-', strtolower(trim($kv[0])));
		if ($ours && count($kv) == 2 && in_array($key, SETTINGS, true))
			$found[$key] = unquote(trim($kv[1]));
	}
	return null;
}

/* The settings of the option files: only $file if given (78 if it cannot
 * be read, as mq), else the usual ones that exist. */
function option_settings(?string $file): array
{
	$found = [];
	if ($file !== null) {
		if (($why = read_option_file($file, $found)) !== null)
			throw new Fail("cannot read option file '$file': $why", 78);
	} else {
		foreach (default_files() as $f)
			read_option_file($f, $found);
	}
	return $found;
}

/* mq's exit status for a server's or the client library's error number
 * (mq(1), EXIT STATUS) */
function status_of(int $code): int
{
	if (in_array($code, [1213, 1205]))
		return 75;
	if (($code >= 2000 && $code < 3000) ||
	    in_array($code, [1040, 1047, 1053, 1927, 5013, 5014, 5015]))
		return 69;	/* cannot connect, connection lost */
	if (in_array($code, [1044, 1045, 1142, 1143, 1227]))
		return 77;	/* access denied */
	if (in_array($code, [1046, 1049, 1102, 1146, 1054]))
		return 78;	/* no database, no such table */
	return $code == 1153 ? 65 : 70;
}

/* A PDOException's text in one line: the server's message and number */
function db_message(PDOException $e): string
{
	$code = code($e) ?: (is_int($e->getCode()) ? $e->getCode() : 0);
	$msg = $e->errorInfo[2] ?? preg_replace('/^SQLSTATE\[\w+\] (\[\d+\] )?/',
	    '', $e->getMessage());
	$msg = trim(preg_replace('/\s+/', ' ', $msg));
	return $code ? "$msg (error $code)" : $msg;
}

/* Connected as mq would be: the options (or MQ_* variables) first, then
 * the option files, then the defaults of Connector/C (no host or
 * localhost: the Unix socket, MYSQL_UNIX_PORT or Debian's; the user
 * logged in; the password from an option file, else MYSQL_PWD). $node,
 * [host, socket, port], names another server (a consumer's confirming
 * node): only these, not the option files' (which name the first), and
 * $o['database'] as it is. */
function connect(array &$o, int $schema_min, int $lock_wait = 50,
    ?array $node = null): PDO
{
	$files = option_settings($o['defaults-file']);
	$pick = fn($k) => (string)$o[$k] !== '' ? $o[$k] : ($files[$k] ?? null);
	if ($node !== null) {
		[$host, $socket, $port] = $node;
	} else {
		[$host, $socket, $port] = [$pick('host'), $pick('socket'),
		    $pick('port')];
		$o['database'] = $pick('database');
	}
	/* it goes in a USE (and the DSN): letters, digits, _ $ - */
	if (!preg_match('/^[A-Za-z0-9_$-]{0,64}$/D', (string)$o['database']))
		throw new Fail("invalid database name '{$o['database']}'", 78);
	$user = $pick('user');
	if ($user === null && function_exists('posix_geteuid'))
		$user = posix_getpwuid(posix_geteuid())['name'] ?? null;
	$user ??= (string)getenv('USER') !== '' ? getenv('USER') : null;
	$password = $files['password'] ?? ((string)getenv('MYSQL_PWD') !== '' ?
	    getenv('MYSQL_PWD') : '');
	if ($host === null || $host === 'localhost')
		$where = 'unix_socket=' . ($socket ?? ((string)getenv(
		    'MYSQL_UNIX_PORT') !== '' ? getenv('MYSQL_UNIX_PORT') :
		    '/run/mysqld/mysqld.sock'));
	else
		$where = "host=$host;port=" . ($port ?? ((string)getenv(
		    'MYSQL_TCP_PORT') !== '' ? getenv('MYSQL_TCP_PORT') : 3306));
	foreach ([$host, $socket, $port] as $v)
		if (str_contains((string)$v, ';'))	/* it would end in the DSN */
			throw new Fail("a connection setting cannot hold ';' " .
			    "here (PDO's DSN): $v", 78);
	$dsn = "mysql:$where;dbname={$o['database']};charset=utf8mb4";
	/* real prepared statements: the server gets the text with its ?
	 * and the values apart, bytes as bytes */
	try {
		$db = new MqPDO($dsn, $user, $password, [
		    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
		    PDO::ATTR_EMULATE_PREPARES => false,
		    PDO::ATTR_TIMEOUT => 10]);
	} catch (PDOException $e) {
		/* mysqlnd's text may not name the server: the DSN's part does */
		throw new Fail("cannot connect ($where): " . db_message($e),
		    status_of(code($e) ?: (int)$e->getCode()));
	}
	session($db, $o, $lock_wait);
	if (($tz = getenv('MQ_EXAMPLE_TIME_ZONE')) !== false && $tz !== '')
		run($db, 'SET time_zone = ?', $o['table'], [$tz]);
	$v = run($db, SQL_VERSION, $o['table'], [$o['table']])->fetchColumn();
	/* newer schemas only add: these statements stay right there */
	if (!preg_match('/^mq schema (\d+)$/', (string)$v, $m) ||
	    (int)$m[1] < $schema_min)
		throw new Fail("table '{$o['table']}' is not an mq table of " .
		    "schema $schema_min or later: run 'mq init'", 78);
	return $db;
}

/* fn()'s exit status, its errors reported in one line as the script
 * name's */
function main(string $name, callable $fn): int
{
	try {
		return $fn();
	} catch (Fail $e) {
		fwrite(STDERR, "$name: " . $e->getMessage() . "\n");
		return $e->getCode();
	} catch (PDOException $e) {
		fwrite(STDERR, "$name: " . db_message($e) . "\n");
		return status_of(code($e));
	}
}
