#!/usr/bin/perl
# burstbench consumer (Perl, Net::Stomp). The contract: clients/contract.md.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use Common;
use Connect;
use Options;
use Records;
use Acks ();
use ConsumerSlots ();
use Time::HiRes qw(gettimeofday);
use Compress::Raw::Zlib ();

my $o = parse_args('consumer', @ARGV);
my $id = $o->{id};
my $stop = 0;
my ($stomp, $session);    # --failover: a change of session means Net::Stomp reconnected
my $txn = $o->{'tx-batch'};
# Acks can only be part of a transaction when they are sent: with --tx-batch, `auto`
# subscribes in `client` mode and acknowledges (cumulatively) inside the transactions.
my $sub_ack = ($txn && $o->{ack} eq 'auto') ? 'client' : $o->{ack};
my $mode = $sub_ack eq 'auto' ? 0 : $sub_ack eq 'client' ? 1 : 2;    # 2 = client-individual
my $ack_every = int(($o->{prefetch} + 1) / 2);
my $target = (!$o->{gate} && $o->{count} > 0) ? $o->{count} * $o->{bursts} : 0;

my ($seen, $now) = (0, 0);    # bench messages received; the last one's receive time

# A MESSAGE frame (receive_loop): keep what the records need, acknowledge as the mode says. The
# hot path is the harness's cost on top of Net::Stomp's, so it keeps no structure per message but
# appends to two strings: a line of the needed header values with a timestamp and the body's
# length ($heads), and what it keeps of the body ($bodies). Keeping each frame's headers hash
# instead (about 2 KB a message) cost 5-8% of the receive rate in page faults and allocation
# (28955a4:docs/perf.md, "Net::Stomp's receive gap"). What it keeps of a body:
# - up to 256 bytes: the body;
# - a body of --size bytes whose bytes after the 6-digit counter are the contract's filler,
#   compared on arrival (a copy and a memcmp): its first 6 bytes (a length past 256 says which);
# - any other: its CRC-32 and first 6 bytes, the length negated.
# Fresh memory is page faults, 3-6 µs each on the bench's VM, so both strings are sized and
# touched before the consumer says it is ready, for --count x --bursts messages (past that they
# grow as they must). Keeping 1 KiB bodies instead cost 0.28 page faults a message, and their
# CRC-32 on arrival 0.6 µs (28955a4:docs/perf.md, "Kept bodies are page faults", "One CPU"). The
# records, with every body's CRC-32, are made at stop.
my ($heads, $bodies) = ('', '');
# the one consumer of the process (--connections 1), as Acks and Records::write_received see it
my $one = { id => $id, records => $o->{records}, heads => \$heads, bodies => \$bodies,
            pending => {}, unacked => 0, tx_open => 0, tx_n => 0, tx_seq => 0 };
my $SIZE = $o->{size};
my $FILL = $SIZE > 256 ? 'x' x ($SIZE - 6) : undef;
# With one queue the record line leaves out the destination header (30-60 ns a message,
# perf/micro/listener-cost.pl): a subscription to a queue (no wildcards, no composite names:
# clients/contract.md) gets only that queue's messages, as the Java consumer records them.
my $one_queue = @{ $o->{dests} } == 1 ? "/queue/$o->{dests}[0]" : '';
# N connections: ConsumerSlots.pm, with what the one connection below does the same way
exit ConsumerSlots::run($o, { sub_ack => $sub_ack, mode => $mode, ack_every => $ack_every,
    target => $target, size => $SIZE, fill => $FILL, one_queue => $one_queue })
  if $o->{connections} > 1;
$stomp = start($o, \$stop);
$session = $stomp->session_id;
$one->{stomp} = $stomp;
presize_received(\$heads, \$bodies, $o->{count} * $o->{bursts}, 1, $SIZE);

sub other_frame {
    my ($f) = @_;
    if ($f->command eq 'ERROR') {
        return if Failover::ignorable($f->headers->{message} // '');
        die 'broker error: ' . ($f->headers->{message} // '') . ' ' . ($f->body // '') . "\n";
    }
    if ($f->command eq 'CONNECTED' && $Failover::ON) {    # a late one: see Failover::reconnected
        $Failover::LATE_CONNECTED = $f;
        Acks::forget($one) if Failover::reconnected($stomp, $id, \$session);
    }
}    # (RECEIPTs and anything else: nothing to do)

my $stdin = $o->{gate} ? StdinLines->new : undef;
my $wait = { timeout => $stdin ? 0.05 : 0.2 };    # receive_frame's, at most (receive_loop)
my $next_tick = 0;
my $next_check = 0;

sub housekeeping {
    my ($t) = @_;
    if ($stdin) {
        for my $l ($stdin->poll(0)) { $stop = 1 if $l eq 'stop' }
        $stop = 1 if $stdin->eof;
    }
    if ($t >= $next_tick) {
        emit('tick', id => $id, t_ns => $t, received => $seen) if $next_tick;
        $next_tick = $t + 1000000000;
    }
    $next_check = $t + 50000000;    # look at stdin and the clock every 50 ms at most
}

# The receive loop: reads frames and handles them until $stop. Given a frame, it handles that
# one alone and returns (on_message, the callback of wait_receipt for a MESSAGE that comes
# while a receipt is awaited). Net::Stomp's receive_frame blocks in select, but for at most
# 50 ms (gated) or 200 ms, so that stdin, SIGTERM (which also interrupts select) and ticks are
# noticed. While frames flow, stdin and the clock are looked at every 50 ms (on the receive
# timestamps), never per message. A MESSAGE frame is handled here, inline, not by a sub called
# for every message. The next frame is read at the loop's end, so that handling a given one
# costs a frame one test (`return if $given`): tested also at the loop's head and where it
# read, it cost about 50 ns more a message (perf/micro/listener-cost.pl runs this sub whole;
# 28955a4:docs/perf.md, "The Perl consumer's loop").
sub receive_loop {
    my ($f) = @_;
    my $given = $f;
    while (1) {
        if ($f) {
            if ($f->command eq 'MESSAGE') {
                # an absent header keeps an empty field; a tab inside a value makes the line
                # too long: either way the record fails its check at stop and the message
                # counts as foreign. At stop an empty bb_nonce or bb_crc32 is written '-', as
                # an absent one: the contract never sends either empty, and telling them apart
                # here (with //) cost 30-60 ns a message (perf/micro/listener-cost.pl). The
                # `no warnings` covers this block: a bare block of its own costs 30-50 ns.
                no warnings 'uninitialized';
                # gettimeofday's one value, the seconds as a double, not its list (about 20 ns
                # less): rounded, exactly the microsecond it read until 2106
                # (tests/unit/test_perl_clock.py)
                $now = int(gettimeofday() * 1e6 + 0.5) * 1000;
                my $h = $f->headers;
                my $body = $f->body;
                my $n = length $body;
                if ($n <= 256) {
                    $bodies .= $body;
                } elsif ($n == $SIZE && substr($body, 6) eq $FILL) {
                    $bodies .= substr($body, 0, 6);    # a length past 256 says so: no marker
                } else {
                    $bodies .= pack('N a6', Compress::Raw::Zlib::crc32($body), $body);
                    $n = -$n;
                }
                # Each line is one string literal: split in two and joined with '.', it
                # compiles to three concatenations and two temporaries (B::Concise), 32-42 ns
                # more a message (an A/B of both forms in one process, 28955a4:docs/perf.md).
                if ($one_queue) {    # every message is the one subscription's: named at stop
                    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t$h->{redelivered}\t$h->{bb_nonce}\t$h->{bb_crc32}\t$n\n";
                } else {
                    $heads .= "$now\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t$h->{redelivered}\t$h->{destination}\t$h->{bb_nonce}\t$h->{bb_crc32}\t$n\n";
                }
                $stop = 1 if defined $h->{bb_seq} && ++$seen == $target;
                if ($mode) {
                    if ($mode == 2) {
                        $stomp->ack({ frame => $f });    # (no transactions: client-individual)
                    } else {
                        $one->{pending}{ $h->{subscription} // '' } = $f;
                        Acks::flush($one, $txn) if ++$one->{unacked} >= $ack_every;
                    }
                    if ($txn && ++$one->{tx_n} >= $txn) {
                        Acks::flush($one, $txn);
                        Acks::commit($one);
                    }
                }
            } else {
                other_frame($f);
            }
            return if $given;
            housekeeping($now) if $now >= $next_check;
        } else {
            unless (defined fileno($stomp->socket)) {
                die "connection to the broker lost\n" unless $Failover::ON;
                Acks::forget($one);
            }
            housekeeping(Common::now_ns());
        }
        last if $stop;
        $f = $stomp->receive_frame($wait);    # (--failover: reconnects if needed)
        Acks::forget($one) if $Failover::ON && Failover::reconnected($stomp, $id, \$session);
    }
}

sub on_message { receive_loop($_[0]) }

# ---------------------------------------------------------------- main

my $rc = eval {
    subscribe_all($stomp, $o, $id, $sub_ack);
    subscribed($stomp, $o, $id, \&on_message);
    $next_tick = Common::now_ns() + 1000000000;
    receive_loop();
    # Stop: acknowledge what we hold, then DISCONNECT with a receipt. Meanwhile, messages the
    # broker already auto-acknowledged are kept; un-acked ones (client modes) are left to be
    # redelivered to others.
    if ($mode) {
        Acks::flush($one, $txn) if $mode == 1;
        Acks::commit($one);
    }
    graceful_disconnect($stomp, 10, $mode ? undef : \&on_message);
    write_received($one, $FILL, $one_queue);
    emit('done', id => $id, received => $one->{received}, foreign => $one->{foreign},
         redelivered => $one->{redelivered});
    1;
};
unless ($rc) {
    # a dropped connection (without --failover) or the broker's ERROR: what was received is
    # still written, as every client does, then exit 1
    my $err = $@ || 'failed';
    eval { write_received($one, $FILL, $one_queue) };
    Common::fail(1, $err);
}
exit 0;
