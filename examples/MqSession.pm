# MqSession.pm: what producer.pl and consumer.pl share: the session
# mq-sql(7) asks for (THE SESSION), the connection and its options, the
# schema check, and the retry of a deadlock or a lock wait timeout. They
# find it in their own directory (FindBin), whatever the current one.
#
# Debian: apt-get install libdbd-mysql-perl.
package MqSession;
use strict;
use warnings;
use DBI qw(:sql_types);
use Exporter qw(import);
use Getopt::Long qw(GetOptions);

our @EXPORT = qw(fail_with I run transaction connect_db report options
    names_ok);

# The statements of mq-sql(7), word for word (t330 checks that they are
# there, in this file and the examples'). `mq_jobs` is the default table:
# run() puts the one asked for in its place.
use constant SQL_ROLLBACK => <<'SQL';
ROLLBACK AND NO CHAIN NO RELEASE
SQL
use constant SQL_SESSION => <<'SQL';
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
SQL
use constant SQL_ISOLATION => <<'SQL';
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE
SQL
use constant SQL_DATABASE => <<'SQL';
SELECT DATABASE()
SQL
use constant SQL_DROP_TEMPORARY => <<'SQL';
DROP TEMPORARY TABLE IF EXISTS `mq_jobs`, `mq_jobs_archive`,
  `mq_jobs_queues`, `mq_jobs_counts`, `mq_jobs_history`,
  `mq_jobs_waiters`, `mq_jobs_gates`, `mq_jobs_ticks`,
  `mq_jobs_deps`, `mq_jobs_waits`
SQL
use constant SQL_BINLOG => <<'SQL';
SELECT IF(@@GLOBAL.log_bin AND @@SESSION.sql_log_bin,
          @@SESSION.binlog_format, 'NONE')
SQL
use constant SQL_LOG_ROWS => <<'SQL';
SET SESSION binlog_format = 'ROW'
SQL
use constant SQL_VERSION => <<'SQL';
SELECT TABLE_COMMENT FROM information_schema.TABLES
 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?
SQL
use constant RETRIES => 8;	# tries of a transaction that met 1213 or 1205

# An error to report in one line, with the exit status to use.
sub fail_with { die { msg => $_[0], status => $_[1] // 70 } }

sub name_ok { my ($s, $re) = @_; $s =~ $re && $s !~ /^[0-9]+$/ }

# An integer parameter of run(); any other is bytes.
sub I { my $v = 0 + shift; \$v }

# Whether the server is a Galera node: 1 or 0 (MySQL: 0, which skips
# what MariaDB alone reads).
use constant GALERA => <<'EOS';
SELECT 0 /*M! + (SELECT COUNT(*)
  FROM information_schema.GLOBAL_VARIABLES
 WHERE VARIABLE_NAME = 'WSREP_ON' AND VARIABLE_VALUE = 'ON') */
EOS

# Runs sql for the table with its parameters: I(n) as an integer, the
# rest as bytes (the payload, keys and error texts are binary).
# On a Galera node, a brute-force abort (another node's write that
# conflicts with the transaction's locks) that lands while the server
# prepares a statement rolls the transaction back and loses its error:
# the statements after it would run outside any transaction, each
# committing by itself, and the COMMIT would commit nothing (mq-sql(7),
# WHAT BREAKS THE CONTRACT). So there, after a prepare that follows
# another statement of a transaction (begin_work: AutoCommit off) and
# before its execute, the server says whether the transaction is still
# open; if not, that is the deadlock it should have reported: error 1213,
# and transaction() runs it again. (Not after the first: it has nothing
# to lose, and with autocommit off the server opens the transaction only
# once a statement runs.)
sub run {
	my ($db, $sql, $table, @args) = @_;
	$sql =~ s/`mq_jobs/`$table/g;
	my $st = $db->prepare($sql);
	still_open($db) if $db->{private_mq_galera} && $db->{private_mq_ran} &&
	    !$db->{AutoCommit};
	for my $i (0 .. $#args) {
		my $v = $args[$i];
		$st->bind_param($i + 1, ref $v ? $$v : $v,
		    ref $v ? SQL_BIGINT : SQL_BLOB);
	}
	$st->execute;
	$db->{private_mq_ran} = 1;
	return $st;
}

# Error 1213 unless the server says the transaction is open (run()).
sub still_open {
	my ($db) = @_;
	# the text protocol: one round trip, and no prepare of its own
	my ($open) = $db->selectrow_array('SELECT @@in_transaction',
	    { mysql_server_prepare => 0 });
	return if $open;
	# dies (RaiseError) with err 1213, as the deadlock would have
	$db->set_err(1213, 'the transaction was rolled back without an ' .
	    'error (a Galera brute-force abort)', '40001');
	die $db->errstr . "\n";
}

# fn->() in a transaction (or alone, autocommitted), again after a
# deadlock or a lock wait timeout (a deadlock rolls the transaction back,
# a timeout only its statement: roll back the rest), a bounded number of
# times, with a jittered backoff. fn may fail_with: rolled back.
sub transaction {
	my ($db, $fn, $autocommit) = @_;
	for (my $try = 1;; $try++) {
		my @r = eval {
			$db->begin_work unless $autocommit;
			$db->{private_mq_ran} = 0;
			my @r = $fn->();
			$db->commit unless $autocommit;
			@r;
		};
		return wantarray ? @r : $r[0] unless $@;
		my $e = $@;
		my $code = $db->err // 0;
		eval { $db->rollback } unless $db->{AutoCommit};
		die $e if ref $e || ($code != 1213 && $code != 1205);
		fail_with("gave up after ${\RETRIES} deadlocks or lock wait " .
		    "timeouts: " . $db->errstr, 75) if $try == RETRIES;
		select(undef, undef, undef,
		    (0.005 + rand(0.015)) * 2**($try - 1));
	}
}

# The session mq-sql(7) asks for (THE SESSION), whatever the server's
# globals or the account's init_connect made it: autocommit on (else every
# write is rolled back at disconnect), UTC, sql_mode, READ COMMITTED, the
# limits, the CHECKs off; the database asked for (an init_connect may have
# run USE), mq's tables and not temporary ones that hide them; statement
# logging turned to rows. And whether the server is a Galera node (run()).
sub session {
	my ($db, $o, $lock_wait) = @_;
	my $t = $o->{table};
	my $want = $o->{database} // '';
	run($db, SQL_ROLLBACK, $t);
	run($db, SQL_SESSION, $t, I($lock_wait // 50), I(60));
	run($db, SQL_ISOLATION, $t);
	my ($current) = run($db, SQL_DATABASE, $t)->fetchrow_array;
	# DBI has no select_db: USE, the name checked with the options
	if ($want ne '' && ($current // '') ne $want) {
		$db->do("USE `$want`", { mysql_server_prepare => 0 });
	} elsif ($want eq '' && !defined $current) {
		fail_with('no database selected: give --database or set ' .
		    'MQ_DATABASE', 78);
	}
	run($db, SQL_DROP_TEMPORARY, $t);
	($db->{private_mq_galera}) = run($db, GALERA, $t)->fetchrow_array;
	my ($format) = run($db, SQL_BINLOG, $t)->fetchrow_array;
	return if ($format // '') ne 'STATEMENT';
	eval { run($db, SQL_LOG_ROWS, $t) } or fail_with('the server logs ' .
	    'statements (binlog_format=STATEMENT), which InnoDB refuses for ' .
	    'READ COMMITTED transactions, and this account cannot log rows ' .
	    'instead (' . $db->errstr . '): set binlog_format=ROW or MIXED, ' .
	    'or grant BINLOG ADMIN', 78);
}

sub connect_db {
	my ($o, $schema_min, $lock_wait) = @_;
	my $dsn = "DBI:mysql:database=" . ($o->{database} // "") . ($o->{socket} ?
	    ";mysql_socket=$o->{socket}" : ";host=" . ($o->{host} //
	    'localhost') . ";port=" . ($o->{port} // 3306));
	# real prepared statements: the server gets the text with its ? and
	# the values apart, bytes as bytes
	my $db = DBI->connect($dsn, $o->{user}, $ENV{MYSQL_PWD} // '',
	    { RaiseError => 1, PrintError => 0, AutoCommit => 1,
	    mysql_server_prepare => 1 });
	session($db, $o, $lock_wait);
	my $tz = $ENV{MQ_EXAMPLE_TIME_ZONE};
	run($db, 'SET time_zone = ?', $o->{table}, $tz)
	    if defined $tz && $tz ne '';
	my ($v) = run($db, SQL_VERSION, $o->{table}, $o->{table})
	    ->fetchrow_array;
	# newer schemas only add: these statements stay right there
	fail_with("table '$o->{table}' is not an mq table of schema " .
	    "$schema_min or later: run 'mq init'", 78)
	    unless ($v // '') =~ /^mq schema ([0-9]+)$/ && $1 >= $schema_min;
	return $db;
}

# Reports an error (ours or the server's) in one line, and its status.
sub report {
	my ($name, $e) = @_;
	my ($msg, $status) = ref $e ? ($e->{msg}, $e->{status}) : ($e, 70);
	$msg =~ s/\s+$//;
	print STDERR "$name: $msg\n";
	return $status;
}

# The options: the script's own (their defaults, and GetOptions' specs),
# and those of the connection, from the environment by default; 64 on an
# unknown one.
sub options {
	my ($defaults, @spec) = @_;
	my %o = (queue => $ENV{MQ_QUEUE} // 'default', %$defaults,
	    socket => $ENV{MQ_SOCKET}, host => $ENV{MQ_HOST},
	    port => $ENV{MQ_PORT}, user => $ENV{MQ_USER} // $ENV{USER},
	    database => $ENV{MQ_DATABASE},
	    table => $ENV{MQ_TABLE} // 'mq_jobs');
	GetOptions(\%o, 'queue=s', @spec, 'socket=s', 'host=s', 'port=i',
	    'user=s', 'database=s', 'table=s') && !@ARGV or exit 64;
	return %o;
}

# Whether the table, queue and database names are ones mq takes: they end
# up in SQL text.
sub names_ok {
	my ($o) = @_;
	return name_ok($o->{table}, qr/^[A-Za-z0-9_]{1,64}\z/) &&
	    name_ok($o->{queue}, qr/^[A-Za-z0-9_.-]{1,64}\z/) &&
	    # it goes in a USE (and the DSN): letters, digits, _ $ -
	    ($o->{database} // '') =~ /^[A-Za-z0-9_\$-]{0,64}\z/;
}

1;
