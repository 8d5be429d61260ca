package Common;
# What the Net::Stomp producer and consumer share: the contract's arguments, connecting,
# JSON lines, stdin control and records (clients/contract.md is the definition).
use strict;
use warnings;
use Time::HiRes qw(gettimeofday);
use Net::Stomp;
use Net::Stomp::Frame;
use Getopt::Long ();
use POSIX ();
use Exporter 'import';
use Failover ();

our @EXPORT = qw(now_ns emit fail parse_args read_options parse_url start prepare connect_broker
                 graceful_disconnect wait_receipt on_sigterm tcp_nodelay burst_count run_bursts
                 subscribe_all subscribed);

our $CLIENT  = 'net-stomp';

# Integer nanoseconds since the epoch (gettimeofday has microsecond resolution).
sub now_ns { my ($s, $us) = gettimeofday(); return $s * 1000000000 + $us * 1000 }

sub emit {
    my ($event, @kv) = @_;
    my $line = '{"event":"' . $event . '"';
    while (@kv) {
        my ($k, $v) = splice(@kv, 0, 2);
        $line .= ',"' . $k . '":'
          . (ref $v eq 'SCALAR' ? ($$v ? 'true' : 'false')    # \1, \0: JSON booleans
             : $k ne 'id' && $k ne 'role' && $v =~ /^-?\d+\z/ ? $v : '"' . $v . '"');
    }
    print STDOUT $line, "}\n";
}

sub fail {
    my ($code, $msg) = @_;
    $msg =~ s/\s+/ /g;
    $msg =~ s/ \z//;
    print STDERR "error: $msg\n";
    exit $code;
}

# ---------------------------------------------------------------- arguments

# The contract's options come from clients/options.tsv, clients/options.yaml resolved for each
# client and role: Getopt::Long over its rows, each value checked against its row (bounds,
# pattern, choices); what this client cannot do is checked after, in parse_args.
my $TABLE = do { (my $d = __FILE__) =~ s{[^/]*\z}{}; ($d || './') . '../options.tsv' };

# The table's rows for $role of this client: hashes of option, type, required, default...
sub table {
    my ($role) = @_;
    open(my $fh, '<', $TABLE) or die "cannot read $TABLE: $!\n";
    my @head;
    my @rows;
    while (my $l = <$fh>) {
        next if $l =~ /^#/;
        chomp $l;
        my @f = split /\t/, $l, -1;
        unless (@head) { @head = @f; next }
        my %r;
        @r{@head} = @f;
        push @rows, \%r if $r{client} eq $CLIENT && $r{role} eq $role;
    }
    return @rows;
}

# $value for row $r's option, checked (exit 2 naming the option when bad).
sub checked {
    my ($r, $value) = @_;
    my $bad = sub { fail(2, "--$r->{option} $_[0]: '$value'") };
    my $type = $r->{type};
    if ($type eq 'int' || $type eq 'number') {
        $bad->($type eq 'int' ? 'needs an integer' : 'needs a number')
          unless $value =~ ($type eq 'int' ? qr/\A-?[0-9]+\z/ : qr/\A-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\z/);
        my ($min, $max, $above) = @$r{qw(min max above)};
        $bad->($above ne '' ? "must be > $above and <= $max" : "must be $min..$max")
          if ($min ne '' && $value < $min) || ($max ne '' && $value > $max)
            || ($above ne '' && $value <= $above);
        return $value;
    }
    my @items = $type eq 'queues' || $type eq 'urls' ? split(/,/, $value, -1) : ($value);
    my @choices = split /,/, $r->{choices};
    if ($type eq 'url' || $type eq 'urls') {
        $bad->('must be an address in ' . join(', ', @choices))
          if grep { !/\A(?:$r->{pattern})\z/ } @items;
    } elsif (@choices && $type eq 'string') {
        $bad->('must be one of ' . join(', ', @choices)) unless grep { $_ eq $value } @choices;
    } elsif ($r->{pattern} ne '') {
        $bad->("must match $r->{pattern}") if grep { !/\A(?:$r->{pattern})\z/ } @items;
    }
    return $value;
}

sub usage {
    my ($role) = @_;
    my $lines = join '', map {
        sprintf("  %-26s %s\n", "--$_->{option}" . ($_->{type} ne 'flag' ? ' ' . uc $_->{type} : ''),
                $_->{help});
    } table($role);
    return "usage: $role.pl --url stomp://HOST:PORT --destinations Q1[,Q2...] [options]\n"
      . "burstbench $role (Perl, Net::Stomp $Net::Stomp::VERSION); see clients/contract.md\n"
      . $lines;
}

sub version_line {
    my $v = sprintf('%vd', $^V);
    return qq({"client":"$CLIENT","library":"Net::Stomp $Net::Stomp::VERSION","runtime":"perl $v"});
}

sub parse_args {
    my ($role, @argv) = @_;
    my $producer = $role eq 'producer';
    my @rows = table($role);
    my %o;
    my @problems;
    {
        local $SIG{__WARN__} = sub { push @problems, $_[0] };
        Getopt::Long::Configure(qw(no_auto_abbrev no_ignore_case no_bundling prefix_pattern=--));
        Getopt::Long::GetOptionsFromArray(\@argv, \%o,
            map { $_->{type} eq 'flag' ? $_->{option} : "$_->{option}=s" } @rows)
          or fail(2, $problems[0] // 'bad arguments');
    }
    fail(2, "unexpected argument '$argv[0]'") if @argv;
    if ($o{help})    { print usage($role); exit 0 }
    if ($o{version}) { print version_line(), "\n"; exit 0 }
    for my $r (@rows) {
        my $name = $r->{option};
        if ($r->{type} eq 'flag') { $o{$name} //= 0; next }
        $o{$name} //= $r->{default} if $r->{default} ne '';
        if (defined $o{$name}) { checked($r, $o{$name}) }
        elsif ($r->{required}) { fail(2, "missing required option --$name") }
    }
    # the password from the environment keeps it off the process list
    $o{password} //= $ENV{BB_PASSWORD} if defined $o{user};
    fail(2, "--user and --password (or BB_PASSWORD) must be given together")
      if defined $o{user} != defined $o{password};
    fail(2, "--cert and --key must be given together") if defined $o{cert} != defined $o{key};
    for (grep { defined $o{$_} } qw(ca cert key)) {
        fail(2, "--$_: cannot read $o{$_}") unless -r $o{$_};
    }
    $o{dests} = [ split /,/, $o{destinations}, -1 ];
    parse_url(\%o);
    # Net::Stomp speaks TLS through IO::Socket::SSL, which it loads only when it connects
    # (and then retries until the timeout): a missing module is a bad request here, at once.
    if ($o{ssl} && !eval { require IO::Socket::SSL; 1 }) {
        fail(2, "stomp+ssl:// needs the Perl module IO::Socket::SSL, which is not installed "
              . "(Debian: apt-get install libio-socket-ssl-perl; or run ./bench setup)");
    }
    if ($o{connections} > 1) {
        # each slot writes a file of its own: PATH with {id} replaced by the slot's id
        fail(2, "--records must contain {id} with --connections > 1 (each slot writes its own file): "
              . "'$o{records}'") if defined $o{records} && index($o{records}, '{id}') < 0;
        fail(2, "--failover with --connections > 1 is not supported by this client") if $o{hosts};
        # a socket a connection, then stdin/out/err, the records files, Perl's own (core Perl
        # cannot raise the limit: the harness gives its children the hard one)
        my ($need, $limit) = ($o{connections} + 64, _open_files_limit());
        fail(2, "--connections $o{connections} needs about $need file descriptors; the limit is "
              . "$limit (ulimit -n)") if defined $limit && $limit < $need;
    }
    unless ($producer) {
        fail(2, "--ack $o{ack} is unsupported by STOMP (use auto, client or client-individual)")
          unless $o{ack} =~ /^(?:auto|client|client-individual)\z/;
        # ActiveMQ's STOMP commit of individually acked messages re-acks them outside the
        # transaction and the subscription stalls (seen with 6.1.7): not offered.
        fail(2, "--tx-batch with --ack client-individual is unsupported (use client or auto)")
          if $o{'tx-batch'} && $o{ack} eq 'client-individual';
    }
    return \%o;
}

# The soft limit on open files (/proc/self/limits: Linux), undef when unknown or unlimited.
sub _open_files_limit {
    open(my $fh, '<', '/proc/self/limits') or return undef;
    while (<$fh>) { return $1 if /^Max open files\s+(\d+)/ }
    return undef;
}

# --name VALUE / --name=VALUE / --flag from @$argv into %$o; $allowed->{name} is true for an
# option that takes a value, false for a flag. Anything else exits 2 with one line.
sub read_options {
    my ($argv, $allowed, $o) = @_;
    my %seen;
    while (@$argv) {
        my $arg = shift @$argv;
        my ($name, $value);
        if ($arg =~ /^--([a-z][a-z-]*)=(.*)\z/s) { ($name, $value) = ($1, $2) }
        elsif ($arg =~ /^--([a-z][a-z-]*)\z/)   { $name = $1 }
        else { fail(2, "unexpected argument '$arg'") }
        fail(2, "unknown option --$name") unless exists $allowed->{$name};
        fail(2, "option --$name given twice") if $seen{$name}++;
        if ($allowed->{$name}) {
            unless (defined $value) {
                fail(2, "option --$name needs a value") unless @$argv;
                $value = shift @$argv;
            }
            $o->{$name} = $value;
        } else {
            fail(2, "option --$name takes no value") if defined $value;
            $o->{$name} = 1;
        }
    }
}

# stomp[+ssl]://HOST:PORT into (ssl, host, port) (exit 2 naming the option otherwise).
sub _split_url {
    my ($url, $opt) = @_;
    if ($url =~ m{^(stomp|stomp\+ssl)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})/?\z}
        && $3 >= 1 && $3 <= 65535) {
        my ($ssl, $host, $port) = ($1 eq 'stomp+ssl' ? 1 : 0, $2, 0 + $3);
        $host =~ s/^\[(.*)\]\z/$1/;
        return ($ssl, $host, $port);
    }
    fail(2, "$opt must be stomp://HOST:PORT or stomp+ssl://HOST:PORT: '$url'");
}

# --url into ssl, host, port; --failover into the list of Net::Stomp `hosts` (--url first).
sub parse_url {
    my ($o) = @_;
    @$o{qw(ssl host port)} = _split_url($o->{url}, '--url');
    return unless defined $o->{failover};
    my @hosts = ({ hostname => $o->{host}, port => $o->{port}, ssl => $o->{ssl} });
    for my $u (split /,/, $o->{failover}, -1) {
        my ($ssl, $host, $port) = _split_url($u, '--failover');
        fail(2, "--failover addresses must use --url's scheme: '$u'") if $ssl != $o->{ssl};
        push @hosts, { hostname => $host, port => $port, ssl => $ssl };
    }
    $o->{hosts} = \@hosts;
    fail(2, "--failover with --tx-batch is not supported by this client")
      if $o->{'tx-batch'};
}

# ---------------------------------------------------------------- connection

# Net::Stomp 0.61 bugs that lose messages, fixed as narrowly as we could. Each is written up
# with a reproducer in docs/findings.md, and tests/unit/test_stock_clients.py allows exactly these
# two names to be replaced in the stock client. Everything else is Net::Stomp as shipped.
{
    no warnings 'redefine';

    # 1. _read_data appends at offset length($buf || ''): when the buffer holds exactly "0" (a
    #    read boundary right after a body's first byte; our bodies start with "0" below seq
    #    100000) the next read overwrites it, the body shifts by one byte and the next frame is
    #    swallowed by the trailer trim. The library's sub with `//` for `||`.
    #    (docs/findings.md#net-stomp-read-data)
    *Net::Stomp::_read_data = sub {
        my ($self, $timeout) = @_;
        return unless $self->select->can_read($timeout);
        my $len = $self->socket->sysread($self->{_framebuf}, $self->bufsize,
                                         length($self->{_framebuf} // ''));
        if (defined $len && $len > 0) {
            $self->{_framebuf_changed} = 1;
        } else {
            $self->logger->warn("error reading frame: $!") unless defined $len;
            $self->_close_socket;
            $self->{_framebuf} = '';
            delete $self->{_command};
            delete $self->{_headers};
        }
        return $len;
    };

    # 2. Net::Stomp::Frame::as_string writes `$body || ''`: a body "0" goes out empty (with
    #    content-length:1 the broker then reads the frame's NUL as the body). The library's
    #    string, with the "0" put back. (docs/findings.md#net-stomp-zero-body)
    my $as_string = \&Net::Stomp::Frame::as_string;
    *Net::Stomp::Frame::as_string = sub {
        my $s = $as_string->(@_);
        my $body = $_[0]->body;
        return defined $body && $body eq '0' ? substr($s, 0, -1) . "0\0" : $s;
    };
}

# Connect (TCP, then STOMP CONNECT) within --connect-timeout, else exit 3 naming the address.
sub connect_broker {
    my ($o) = @_;
    my $t0 = Time::HiRes::time();
    my $deadline = $t0 + $o->{'connect-timeout'};
    my ($stomp, $why);
    while (1) {
        my $left = $deadline - Time::HiRes::time();
        last if $left <= 0;
        $stomp = eval {
            Net::Stomp->new({
                hostname => $o->{host}, port => $o->{port}, timeout => $left,
                initial_reconnect_attempts => 1, reconnect_attempts => 1, connect_delay => 0,
                ($o->{ssl} ? (ssl => 1, ssl_options => ssl_options($o)) : ()),
                ($o->{hosts} ? Failover::options($o) : ()),
            });
        };
        last if $stomp;
        ($why = $@ || 'unknown error') =~ s/ at \S+ line \d+.*//s;
        $why =~ s/^Failed to connect: //;
        $why =~ s/; giving up$//;
        my $pause = $deadline - Time::HiRes::time();
        Time::HiRes::sleep($pause < 0.25 ? ($pause > 0 ? $pause : 0) : 0.25);
    }
    fail(3, "cannot connect to $o->{url} within $o->{'connect-timeout'} s: " . ($why // 'timed out'))
      unless $stomp;
    my $left = $deadline - Time::HiRes::time();
    $left = 0.001 if $left < 0.001;
    $stomp->timeout($left);
    my $frame = eval {
        $stomp->connect({ defined $o->{user} ? (login => $o->{user}, passcode => $o->{password}) : () });
    };
    unless ($frame && $frame->command eq 'CONNECTED') {
        my $msg = !$frame ? ($@ ? "connection lost during STOMP CONNECT" : "no CONNECTED frame in time")
                : ($frame->headers->{message} // $frame->body // $frame->command);
        fail(3, "cannot connect to $o->{url}: $msg");
    }
    $stomp->timeout(undef);
    return $stomp;
}

# IO::Socket::SSL's options for the broker at $o->{host}.
sub ssl_options {
    my ($o) = @_;
    # Always verify, the peer's certificate and its name: against --ca when given, else
    # against the system's trust store.
    return {
        SSL_verify_mode => 1,  # SSL_VERIFY_PEER
        SSL_verifycn_scheme => 'default',
        SSL_verifycn_name => $o->{host},
        ($o->{ca} ? (SSL_ca_file => $o->{ca}) : ()),
        ($o->{cert} ? (SSL_cert_file => $o->{cert}, SSL_key_file => $o->{key}) : ()),
    };
}

# The ready line's socket facts: TCP_NODELAY read back from Net::Stomp's socket, and over
# TLS the version it negotiated (IO::Socket::SSL's get_sslversion: "TLSv1_3").
sub tcp_nodelay {
    my ($stomp) = @_;
    require Socket;
    my $sock = $stomp->socket;
    my @tls = eval { $sock->isa('IO::Socket::SSL') } ? (tls => $sock->get_sslversion) : ();
    my $v = getsockopt($sock, Socket::IPPROTO_TCP(), Socket::TCP_NODELAY());
    return (tcp_nodelay => \0, tcp_nodelay_how => 'unknown', @tls) unless defined $v;
    return (tcp_nodelay => (unpack('i', $v) ? \1 : \0), tcp_nodelay_how => 'getsockopt', @tls);
}

# Wait for the RECEIPT with this id; returns 1, or 0 on timeout / stop. Dies on ERROR or loss;
# with --failover a lost connection returns -1 instead (the library reconnects on the next
# call), and so does a late CONNECTED (see Failover::reconnected). $on_message (optional) gets
# any MESSAGE frame that arrives meanwhile.

sub wait_receipt {
    my ($stomp, $rid, $timeout, $on_message, $stopref, $idle) = @_;
    my $deadline = defined $timeout ? Time::HiRes::time() + $timeout : undef;
    while (1) {
        my $wait = 1;
        if (defined $deadline) {
            $wait = $deadline - Time::HiRes::time();
            return 0 if $wait <= 0;
            $wait = 1 if $wait > 1;
        }
        my $f = $stomp->receive_frame({ timeout => $wait });
        if (!$f) {
            unless (defined fileno($stomp->socket)) {
                return -1 if $Failover::ON;
                die "connection to the broker lost\n";
            }
            return 0 if $stopref && $$stopref;
            $idle->() if $idle;
            next;
        }
        my $cmd = $f->command;
        if ($cmd eq 'RECEIPT') {
            return 1 if ($f->headers->{'receipt-id'} // '') eq $rid;
        } elsif ($cmd eq 'ERROR') {
            die 'broker error: ' . ($f->headers->{message} // '') . ' ' . ($f->body // '') . "\n";
        } elsif ($cmd eq 'MESSAGE') {
            $on_message->($f) if $on_message;
        } elsif ($cmd eq 'CONNECTED' && $Failover::ON) {
            # a reconnect whose CONNECTED came late (see Failover::reconnected): the receipt
            # asked for on the old connection will never come
            $Failover::LATE_CONNECTED = $f;
            return -1;
        }
    }
}

# DISCONNECT with a receipt (Net::Stomp's own disconnect has none), so that everything sent
# before it has been processed when the socket closes.
sub graceful_disconnect {
    my ($stomp, $timeout, $on_message) = @_;
    my $ok = eval {
        $stomp->send_frame(Net::Stomp::Frame->new(
            { command => 'DISCONNECT', headers => { receipt => 'bb-disconnect' } }));
        wait_receipt($stomp, 'bb-disconnect', $timeout // 10, $on_message);
    };
    my $err = $@;
    eval { $stomp->socket->close if $stomp->socket };
    die $err if $err;
    return $ok;
}

# SIGTERM sets the flag. SA_RESTART, so that a write blocked by flow control is not cut short
# (Net::Stomp would take the EINTR for a lost connection); select() still returns early.
# What every client does after parsing its options: SIGTERM sets $$stopref, a broken pipe
# is an error return instead of a signal, stdout unbuffered; then connect.
sub start {
    my ($o, $stopref) = @_;
    prepare($o, $stopref);
    return connect_broker($o);
}

sub prepare {
    my ($o, $stopref) = @_;
    $Failover::ON = $o->{hosts} ? 1 : 0;
    on_sigterm($stopref);
    $SIG{PIPE} = 'IGNORE';
    $| = 1;
}

sub on_sigterm {
    my ($flagref) = @_;
    require POSIX;
    my $act = POSIX::SigAction->new(sub { $$flagref = 1 }, POSIX::SigSet->new, POSIX::SA_RESTART());
    $act->safe(1);    # deferred like %SIG handlers: runs between Perl ops
    POSIX::sigaction(POSIX::SIGTERM(), $act)
      or die "cannot install SIGTERM handler: $!\n";
}

# ---------------------------------------------------------------- the contract's bursts

# Messages in a producer's burst: --count, or with --duration those due before its end (open
# loop), or without a rate a flood that the end cuts short.
sub burst_count {
    my ($o) = @_;
    return $o->{count} unless $o->{duration} > 0;
    return $o->{rate} > 0 ? POSIX::ceil($o->{duration} * $o->{rate}) || 1 : 1e15;
}

# A producer's bursts: --bursts of them, or with --gate one per `go` on stdin until `stop` or
# its end, until $$stop. $burst->($b) sends burst $b; between commands $tick->($now) prints the
# ticks due, the next one at $$next_tick.
sub run_bursts {
    my ($o, $stop, $burst, $tick, $next_tick) = @_;
    unless ($o->{gate}) {
        for my $b (0 .. $o->{bursts} - 1) {
            last if $$stop;
            $burst->($b);
        }
        return;
    }
    my $in = StdinLines->new;
    my $b = 0;
    while (!$$stop) {
        my $wait = ($$next_tick - now_ns()) / 1e9;
        for my $l ($in->poll($wait < 0.01 ? 0.01 : $wait)) {
            if ($l eq 'go') {
                $burst->($b++);
                return if $$stop;
            } elsif ($l eq 'stop') {
                return;
            } elsif ($l ne '') {
                print STDERR "ignoring unknown command '$l'\n";
            }
        }
        return if $in->eof;
        $tick->(now_ns());
    }
}

# A consumer's SUBSCRIBE to every destination of $o in ack mode $ack, the last with a receipt
# (subscribed awaits it).
sub subscribe_all {
    my ($stomp, $o, $id, $ack) = @_;
    my $n = @{ $o->{dests} };
    for my $i (0 .. $n - 1) {
        $stomp->subscribe({
            destination => "/queue/$o->{dests}[$i]", id => "bb-sub-$i", ack => $ack,
            (defined $o->{'window-bytes'} ? ('consumer-window-size' => $o->{'window-bytes'})
                                           : ('activemq.prefetchSize' => $o->{prefetch})),
            ($i == $n - 1 ? (receipt => "bb-$id-subscribed") : ()),
        });
    }
}

# The receipt of subscribe_all, awaited up to --connect-timeout ($on_message gets what arrives
# first); then the ready line.
sub subscribed {
    my ($stomp, $o, $id, $on_message) = @_;
    wait_receipt($stomp, "bb-$id-subscribed", $o->{'connect-timeout'}, $on_message)
      or die "no receipt for SUBSCRIBE\n";
    emit('ready', id => $id, role => 'consumer', tcp_nodelay($stomp));
}

# ---------------------------------------------------------------- stdin control

{
    package StdinLines;
    # Non-blocking line reader on STDIN (sysread + select), so that SIGTERM and the broker
    # socket are never starved by a blocked read.
    sub new { my $c = shift; return bless { buf => '', eof => 0, lines => [] }, $c }
    sub fh  { return \*STDIN }
    # Read what is available now (or wait up to $timeout seconds). Returns the lines read.
    sub poll {
        my ($self, $timeout) = @_;
        return () if $self->{eof} && !@{ $self->{lines} };
        unless ($self->{eof}) {
            my $rin = '';
            vec($rin, fileno(STDIN), 1) = 1;
            my $n = select(my $rout = $rin, undef, undef, $timeout);
            if ($n > 0) {
                my $got = sysread(STDIN, $self->{buf}, 65536, length $self->{buf});
                if (!$got) {
                    $self->{eof} = 1 unless !defined $got && ($!{EINTR} || $!{EAGAIN});
                }
                while ($self->{buf} =~ s/^([^\n]*)\n//) {
                    (my $l = $1) =~ s/^\s+|\s+\z//g;
                    push @{ $self->{lines} }, $l;
                }
                if ($self->{eof} && length $self->{buf}) {
                    (my $l = $self->{buf}) =~ s/^\s+|\s+\z//g;
                    push @{ $self->{lines} }, $l;
                    $self->{buf} = '';
                }
            }
        }
        my @l = @{ $self->{lines} };
        @{ $self->{lines} } = ();
        return @l;
    }
    sub eof { return $_[0]{eof} }
}

1;
