#!/usr/bin/perl
# producer.pl: push one job into mq's table with plain SQL, as mq-sql(7)
# documents it; mq work or mq pop runs it like any other.
#
# usage: producer.pl [--queue Q] [--priority N] [--delay S]
#                    [--max-attempts N] [--dedup KEY] [--every S] [--wake]
#                    [--file F] [connection options]
#
# The payload is the bytes of F, or of standard input, byte for byte.
# Prints the job's id (with --dedup, the live job's id if one holds the
# key). Connection, as mq finds it (mq(1), OPTION FILES, ENVIRONMENT):
# --socket, --host, --port, --user, --database, --defaults-file, else
# MQ_SOCKET, MQ_HOST, MQ_PORT, MQ_USER, MQ_DATABASE, MQ_DEFAULTS_FILE,
# else the option files, which DBD::mysql hands to Connector/C as mq does
# (mysql_read_default_group=mq, and mysql_read_default_file for
# --defaults-file): [client], [client-server], [client-mariadb] and [mq]
# of /etc/my.cnf, /etc/mysql/my.cnf, $MARIADB_HOME/my.cnf (or
# $MYSQL_HOME's) and ~/.my.cnf, all their settings; the password from an
# option file, else MYSQL_PWD. One difference: an init_connect's USE is
# undone only for a database given by --database or MQ_DATABASE, not by
# an option file (DBI does not say which one the file named).
# --table or MQ_TABLE (default mq_jobs), MQ_QUEUE (default "default").
# MQ_EXAMPLE_TIME_ZONE sets the session's time zone: it changes nothing.
# Errors: one line, with mq's exit status (mq(1), EXIT STATUS): 69 cannot
# connect, 77 access denied, 78 no database selected, an option file that
# cannot be read or not an mq table, 70 another server error.
#
# Debian: apt-get install libdbd-mysql-perl.
use strict;
use warnings;
use FindBin qw($RealBin);
use lib $RealBin;
use MqSession;

# The statements of mq-sql(7), word for word (t330 checks that they are
# there); those of the session are in MqSession.pm. `mq_jobs` is the
# default table: run() puts the one asked for in its place.
use constant SQL_PUSH => <<'SQL';
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?)
SQL
use constant SQL_PUSH_KEY => <<'SQL';
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?)
SQL
use constant SQL_PUSH_EVERY => <<'SQL';
INSERT INTO `mq_jobs` (queue, priority, max_attempts, available_at,
  created_at, payload, dedup_key, every_us, every_anchor)
 VALUES (?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND,
  UTC_TIMESTAMP(6), ?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND)
SQL
use constant SQL_LIVE_KEY => <<'SQL';
SELECT id, queue FROM `mq_jobs`
 WHERE dedup_unique = CONCAT(?, '/', ?)
SQL
use constant SQL_WAITERS => <<'SQL';
SELECT ID FROM information_schema.PROCESSLIST
 WHERE DB = DATABASE() AND ID <> CONNECTION_ID()
   AND CAST(INFO AS BINARY) LIKE ? ESCAPE '!'
 ORDER BY TIME DESC, ID LIMIT ?
SQL
use constant SQL_KILL => <<'SQL';
KILL QUERY ?
SQL

# the first schema these statements are right for
use constant SCHEMA_MIN => 8;

# [id, existed]: the job's id, and whether a live job held the key
sub push_job {
	my ($db, $o, $payload) = @_;
	my $t = $o->{table};
	my $delay = I(int($o->{delay} * 1e6 + 0.5));
	my @head = ($o->{queue}, I($o->{priority}), I($o->{'max-attempts'}),
	    $delay, $payload);
	my ($sql, @args);
	if (defined $o->{every}) {
		($sql, @args) = (SQL_PUSH_EVERY, @head, $o->{dedup},
		    I(int($o->{every} * 1e6 + 0.5)), $delay);
	} elsif (defined $o->{dedup}) {
		($sql, @args) = (SQL_PUSH_KEY, @head, $o->{dedup});
	} else {
		($sql, @args) = (SQL_PUSH, @head);
	}
	# a duplicate key: the live job's id, unless it finished in between
	# (the key is free again: insert again)
	for (1 .. 3) {
		my $id = eval {
			transaction($db, sub { run($db, $sql, $t, @args) }, 1);
			$db->last_insert_id(undef, undef, undef, undef);
		};
		return ($id, 0) if defined $id;
		die $@ if ref $@ || ($db->err // 0) != 1062 ||
		    !defined $o->{dedup};
		my $queue;
		($id, $queue) = run($db, SQL_LIVE_KEY, $t, $o->{queue},
		    $o->{dedup})->fetchrow_array;
		# a foreign row: its queue name has a '/'
		fail_with("the dedup key is held by job $id, which is not of "
		    . "queue '$o->{queue}'", 70)
		    if defined $id && $queue ne $o->{queue};
		return ($id, 1) if defined $id;
	}
	fail_with('the dedup key is taken and freed too fast: try again', 75);
}

# Optional: mq's waiters find the job within a second anyway. This ends
# the marked sleep of one of them now (mq-sql(7), WAKING WAITERS); seeing
# and ending another user's needs PROCESS and CONNECTION ADMIN.
sub wake {
	my ($db, $o) = @_;
	my $marker = "/* mq-wait `$o->{table}` $o->{queue} */";
	(my $pattern = $marker) =~ s/([_%!])/!$1/g;
	my $ids = run($db, SQL_WAITERS, $o->{table}, "%$pattern%", I(1))
	    ->fetchall_arrayref;
	for my $row (@$ids) {
		eval { run($db, SQL_KILL, $o->{table}, I($row->[0])) };
		# 1094: it ended by itself
		die $@ if $@ && ($db->err // 0) != 1094;
	}
}

my %o = options({ priority => 0, delay => 0, 'max-attempts' => 10 },
    'priority=i', 'delay=f', 'max-attempts=i', 'dedup=s', 'every=f', 'wake',
    'file=s');
unless (names_ok(\%o)) {
	print STDERR "producer.pl: invalid table, queue or database name\n";
	exit 64;
}
if ((defined $o{every} && $o{every} < 1) || $o{delay} < 0 ||
    $o{'max-attempts'} < 1) {
	print STDERR "producer.pl: invalid --every, --delay or " .
	    "--max-attempts\n";
	exit 64;
}
my $status = eval {
	my $in;
	if (defined $o{file}) {
		open($in, '<:raw', $o{file}) or fail_with("$o{file}: $!", 74);
	} else {
		$in = \*STDIN;
		binmode $in;
	}
	my $payload = do { local $/; <$in> } // '';
	my $db = connect_db(\%o, SCHEMA_MIN);
	my ($id, $existed) = push_job($db, \%o, $payload);
	wake($db, \%o) if $o{wake} && !$existed && $o{delay} == 0;
	print "$id\n";
	0;
};
exit(defined $status ? $status : report('producer.pl', $@));
