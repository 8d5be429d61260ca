package Common;
# What the Net::Stomp producer and consumer share: JSON lines, the bursts loop, stdin control,
# and the two fixes of Net::Stomp 0.61 (clients/contract.md is the definition). The options are
# Options.pm, connecting and subscribing Connect.pm, records Records.pm.
use strict;
use warnings;
use Time::HiRes qw(gettimeofday);
use Net::Stomp;
use Net::Stomp::Frame;
use POSIX ();
use Exporter 'import';

our @EXPORT = qw(now_ns emit fail burst_count run_bursts);

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
