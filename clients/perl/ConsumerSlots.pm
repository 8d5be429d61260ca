package ConsumerSlots;
# The consumer's --connections N > 1 (clients/contract.md, "Many connections in one process"):
# N slots (Slots.pm), each a consumer of its own on its connection: its subscriptions,
# acknowledgements, transactions and records ({heads} and {bodies}, refs to strings as
# consumer.pl's $heads and $bodies), and its lines. One loop serves them all (slots_loop):
# select over their sockets, then each ready slot's frames. They stop together at the target.
use strict;
use warnings;
use Time::HiRes qw(gettimeofday);
use Compress::Raw::Zlib ();
use Net::Stomp::Frame;
use Common;
use Connect;
use Records;
use Slots;
use Acks ();

my ($o, $stop, @slots, $stdin, $wait);
my ($next_tick, $next_check) = (0, 0);
my ($sub_ack, $mode, $ack_every, $target, $txn, $SIZE, $FILL, $one_queue, $expected);
my $total = 0;                    # bench messages the slots received together
my $BATCH = 64;                   # frames of one slot in a row, then the others' turn
my $NOW = { timeout => 0 };

# Run the consumer of $o's N slots, acknowledging as $how says (consumer.pl's settings:
# sub_ack, mode, ack_every, target, size, fill, one_queue); returns the exit code (0), or exits
# 1 naming the slot that failed (its connection dropped, the broker's ERROR) once every slot's
# records are written.
sub run {
    my ($opts, $how) = @_;
    $o = $opts;
    ($sub_ack, $mode, $ack_every, $target, $SIZE, $FILL, $one_queue)
      = @$how{qw(sub_ack mode ack_every target size fill one_queue)};
    ($stop, $txn, $expected) = (0, $o->{'tx-batch'}, $o->{count} * $o->{bursts});
    $stdin = $o->{gate} ? StdinLines->new : undef;
    $wait = { timeout => $stdin ? 0.05 : 0.2 };    # select's, at most (slots_loop)
    my $rc = eval { run_slots(); 1 };
    return 0 if $rc;
    my ($err, $failed) = ($@ || 'failed', $Slots::SLOT);
    eval { write_received($_, $FILL, $one_queue) } for @slots;
    fail(1, $failed ? "slot $failed->{id}: $err" : $err);
}

# stdin and the clock, every 50 ms at most (consumer.pl's housekeeping, for every slot)
sub housekeeping {
    my ($t) = @_;
    if ($stdin) {
        for my $l ($stdin->poll(0)) { $stop = 1 if $l eq 'stop' }
        $stop = 1 if $stdin->eof;
    }
    if ($t >= $next_tick) {
        slots_tick($t);
        $next_tick = $t + 1000000000;
    }
    $next_check = $t + 50000000;
}

# A frame other than MESSAGE: the broker's ERROR ends the consumer (no --failover with slots).
sub other_frame {
    my ($f) = @_;
    die 'broker error: ' . ($f->headers->{message} // '') . ' ' . ($f->body // '') . "\n"
      if $f->command eq 'ERROR';
}

sub slot_subscribe {
    my ($s) = @_;
    my ($lines, $kept) = ('', '');    # the slot's $heads and $bodies
    @$s{qw(heads bodies seen ticked pending unacked tx_open tx_n tx_seq served)}
      = (\$lines, \$kept, 0, 0, {}, 0, 0, 0, 0, 0);
    # the slots share the queues' messages: each is sized for its share of them
    my $n = $o->{connections};
    presize_received(\$lines, \$kept, int(($expected + $n - 1) / $n), 1 / $n, $SIZE);
    subscribe_all($s->{stomp}, $o, $s->{id}, $sub_ack);
}

# A MESSAGE frame of slot $s: kept as receive_loop keeps one (the same two strings' lines, which
# make_records reads), acknowledged on the slot's connection as the mode says.
sub slot_message {
    my ($s, $f) = @_;
    no warnings 'uninitialized';
    # receive_loop's clock, the microsecond gettimeofday read (tests/unit/test_perl_clock.py)
    my $t = int(gettimeofday() * 1e6 + 0.5) * 1000;
    my $h = $f->headers;
    my $body = $f->body;
    my $n = length $body;
    my $bodies = $s->{bodies};
    if ($n <= 256) {
        $$bodies .= $body;
    } elsif ($n == $SIZE && substr($body, 6) eq $FILL) {
        $$bodies .= substr($body, 0, 6);
    } else {
        $$bodies .= pack('N a6', Compress::Raw::Zlib::crc32($body), $body);
        $n = -$n;
    }
    if ($one_queue) {
        ${ $s->{heads} } .= "$t\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t$h->{redelivered}\t$h->{bb_nonce}\t$h->{bb_crc32}\t$n\n";
    } else {
        ${ $s->{heads} } .= "$t\t$h->{bb_producer}\t$h->{bb_seq}\t$h->{bb_burst}\t$h->{bb_sent_ns}\t$h->{redelivered}\t$h->{destination}\t$h->{bb_nonce}\t$h->{bb_crc32}\t$n\n";
    }
    if (defined $h->{bb_seq}) {
        $s->{seen}++;
        $stop = 1 if ++$total == $target;
    }
    if ($mode) {
        if ($mode == 2) {
            $s->{stomp}->ack({ frame => $f });
        } else {
            $s->{pending}{ $h->{subscription} // '' } = $f;
            Acks::flush($s, $txn) if ++$s->{unacked} >= $ack_every;
        }
        if ($txn && ++$s->{tx_n} >= $txn) {
            Acks::flush($s, $txn);
            Acks::commit($s);
        }
    }
}

# Slot $s's frames, up to $BATCH: whatever its Net::Stomp object holds in its buffer, then
# what its socket has, without waiting. Returns true when it stopped at $BATCH (more may be
# there: serve it again before waiting), false when it has no whole frame left.
sub slot_frames {
    my ($s) = @_;
    $Slots::SLOT = $s;
    my $stomp = $s->{stomp};
    for (1 .. $BATCH) {
        my $f = $stomp->receive_frame($NOW);
        unless ($f) {
            die "connection to the broker lost\n" unless defined fileno($stomp->socket);
            return 0;
        }
        if ($f->command eq 'MESSAGE') {
            slot_message($s, $f);
        } else {
            other_frame($f);
        }
        return 0 if $stop;
    }
    return 1;
}

# The slots' receive loop, until $stop: the ready slots' frames (ready_slots), and those of the
# slots that stopped at $BATCH last time (then without waiting); stdin and the clock every
# 50 ms, as receive_loop looks at them. Every slot is served once first: reading up to its
# SUBSCRIBE receipt may have left MESSAGE frames in its Net::Stomp buffer, which select does
# not see.
sub slots_loop {
    my $poller = slot_poller(@slots);
    my ($round, @again) = (0, @slots);
    until ($stop) {
        my @ready = ready_slots($poller, @again ? 0 : $wait->{timeout});
        my @more;
        $round++;
        for my $s (@again, @ready) {
            next if $s->{served} == $round;    # in both lists
            $s->{served} = $round;
            push @more, $s if slot_frames($s);
            last if $stop;
        }
        @again = @more;
        my $t = Common::now_ns();
        housekeeping($t) if $t >= $next_check;
    }
}

# A slot's tick: at most once a second, and only when its total changed (N slots, N lines).
sub slots_tick {
    my ($t) = @_;
    for my $s (@slots) {
        next if $s->{seen} == $s->{ticked};
        emit('tick', id => $s->{id}, t_ns => $t, received => $s->{seen});
        $s->{ticked} = $s->{seen};
    }
}

sub run_slots {
    # the slots connect one after another, each subscribing as it comes (one round trip a
    # connection less than awaiting each receipt in turn); then each receipt, each ready line
    start_slots($o, \$stop, \@slots, \&slot_subscribe);
    for my $s (@slots) {
        $Slots::SLOT = $s;
        subscribed($s->{stomp}, $o, $s->{id}, sub { slot_message($s, $_[0]) });
    }
    $next_tick = Common::now_ns() + 1000000000;
    slots_loop();
    # stop as run_one does, every slot: acknowledgements, then the DISCONNECTs (all at once)
    if ($mode) {
        for my $s (@slots) {
            $Slots::SLOT = $s;
            Acks::flush($s, $txn) if $mode == 1;
            Acks::commit($s);
        }
    }
    disconnect_slots(\@slots, 10, $mode ? undef : \&slot_message);
    for my $s (@slots) {
        $Slots::SLOT = $s;
        write_received($s, $FILL, $one_queue);
        emit('done', id => $s->{id}, received => $s->{received}, foreign => $s->{foreign},
             redelivered => $s->{redelivered});
    }
}

1;
