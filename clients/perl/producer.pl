#!/usr/bin/perl
# burstbench producer (Perl, Net::Stomp). The contract: clients/contract.md.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use Common;
use Time::HiRes qw(gettimeofday);
use Compress::Raw::Zlib ();
use POSIX ();

my $o = parse_args('producer', @ARGV);
my $id = $o->{id};

my $stop = 0;
my $many = $o->{connections} > 1;    # N slots (below) instead of the one $stomp
my $stomp = $many ? undef : start($o, \$stop);

my $count = $o->{count};
my $duration_ns = int($o->{duration} * 1e9);
if ($duration_ns) {    # a burst of fixed duration: the messages due before its end, or a flood
    $count = $o->{rate} > 0 ? POSIX::ceil($o->{duration} * $o->{rate}) || 1 : 1e15;
}
my $size  = $o->{size};
my $txn   = $o->{'tx-batch'};
my $rate  = $o->{rate};
my $persistent = $o->{persistent};
my $nonce = $o->{nonce};
my @qdest = map { "/queue/$_" } @{ $o->{dests} };
my $nd = @qdest;
my $filler = $size > 6 ? 'x' x ($size - 6) : '';

my $sent_total = 0;
# The records, written at stop: a line "=BURST" when a burst starts (or starts again), then
# "SEQ\tACTUAL_NS" a message, with "\tSENT_NS" when --rate schedules it (the contract's lines,
# which add --id, the burst and the schedule, are made at stop: four numbers a message made
# into text cost 60 ns more, 28955a4:docs/perf.md)
my $rec = '';
presize(\$rec, $count * $o->{bursts} * 32, 64 << 20) unless $duration_ns || $many;    # lines of ~27 B
my $next_tick = Common::now_ns() + 1000000000;
my ($tx_open, $tx_seq) = (0, 0);
my $unconfirmed;               # a burst sent but not yet confirmed: [burst, sent, first, last]

sub tick {
    my ($t) = @_;
    return if $t < $next_tick;
    emit('tick', id => $id, t_ns => $t, sent => $sent_total);
    $next_tick = $t + 1000000000;
}

sub tx_frame {
    my ($command, %extra) = @_;
    $stomp->send_frame(Net::Stomp::Frame->new(
        { command => $command, headers => { transaction => "bb-$id-tx-$tx_seq", %extra } }));
}

sub print_burst {
    my ($b, $n, $first, $last) = @{ $_[0] };
    emit('burst', id => $id, burst => $b, sent => $n, first_ns => $first, last_ns => $last);
}

# --failover: the session the last burst was confirmed on (a change = Net::Stomp reconnected)
my $session = $many ? undef : $stomp->session_id;

# Send burst $b; returns when its last message is confirmed (or on SIGTERM). With --failover,
# a burst whose confirmation the dropped connection took is sent again, whole.
sub run_burst {
    my ($b) = @_;
    while (send_burst($b) eq 'again') {
        print STDERR "burst $b unconfirmed when the connection dropped: sending it again\n";
    }
}

sub send_burst {
    my ($b) = @_;
    my ($first, $last) = (0, 0);
    my $base = $b * $count;
    my $start = Common::now_ns();
    my $ns_per_msg = $rate > 0 ? 1e9 / $rate : 0;
    my $rid = "bb-$id-burst-$b";
    my $end = $duration_ns && !$ns_per_msg ? $start + $duration_ns : 0;    # a timed flood
    my $n = 0;
    my $confirm;                # the frame that carries the receipt was sent
    $rec .= "=$b\n";
    for my $i (0 .. $count - 1) {    # (a C-style loop cost 100 ns more a message)
        last if $stop;
        my $seq = $base + $i;
        my ($s, $us, $now, $sent_ns);
        if ($ns_per_msg) {
            $sent_ns = $start + int($i * $ns_per_msg);
            ($s, $us) = gettimeofday();
            $now = $s * 1000000000 + $us * 1000;
            if ($sent_ns > $now) {
                Time::HiRes::sleep(($sent_ns - $now) / 1e9);
                last if $stop;
                ($s, $us) = gettimeofday();
                $now = $s * 1000000000 + $us * 1000;
            }
        } else {
            ($s, $us) = gettimeofday();
            $sent_ns = $now = $s * 1000000000 + $us * 1000;
        }
        my $final = $i == $count - 1 || ($end && $now >= $end);
        my $body = $size >= 6 ? sprintf('%06d', $seq % 1000000) . $filler
                              : substr(sprintf('%06d', $seq % 1000000), 0, $size);
        my %h = (
            destination => $qdest[$seq % $nd], bb_producer => $id, bb_seq => $seq,
            bb_burst => $b, bb_sent_ns => $sent_ns, bb_nonce => $nonce,
            bb_crc32 => sprintf('%08x', Compress::Raw::Zlib::crc32($body)),
            bytes_message => 1, body => $body,
        );
        $h{persistent} = 'true' if $persistent;
        if ($txn) {
            unless ($tx_open) {
                $tx_seq++;
                tx_frame('BEGIN');
                $tx_open = 1;
            }
            $h{transaction} = "bb-$id-tx-$tx_seq";
        } elsif ($final) {
            $h{receipt} = $rid;
            $confirm = 1;
        }
        $first = $now unless $n;
        $last = $now;
        $stomp->send(\%h);
        $n++;
        $sent_total++;
        $rec .= $ns_per_msg ? "$seq\t$now\t$sent_ns\n" : "$seq\t$now\n";
        if ($txn && ($n % $txn == 0 || $final)) {
            if ($final) {
                tx_frame('COMMIT', receipt => $rid);
                $confirm = 1;
            } else {
                tx_frame('COMMIT');
            }
            $tx_open = 0;
        }
        tick($now) if $now >= $next_tick;
        last if $final;
    }
    return '' unless $n;
    $unconfirmed = [$b, $n, $first, $last];
    return '' unless $confirm;    # stopped mid-burst: the disconnect receipt confirms it
    my $got = wait_receipt($stomp, $rid, undef, undef, \$stop, sub { tick(Common::now_ns()) });
    if ($Common::FAILOVER) {
        # a receive on a closed connection is what makes Net::Stomp reconnect (it dies if it
        # cannot within its reconnect_attempts)
        $stomp->receive_frame({ timeout => 0 }) if $got == -1;
        return 'again' if reconnected($stomp, $id, \$session) || $got == -1;
    }
    if ($got) {
        print_burst($unconfirmed);
        $unconfirmed = undef;
    }
    return '';
}

my $HEADER = "#producer\tseq\tburst\tsent_ns\tactual_ns";

# The contract's lines from the records string $$rec (see above) of producer $pid, a megabyte
# at a time (for write_records).
sub contract_lines {
    my ($rec, $pid) = @_;
    my ($b, $pos) = (0, 0);
    return sub {
        my $out = '';
        while (length $out < 1 << 20 && (my $nl = index($$rec, "\n", $pos)) >= 0) {
            my $l = substr($$rec, $pos, $nl - $pos);
            $pos = $nl + 1;
            if (substr($l, 0, 1) eq '=') {
                $b = substr($l, 1);
                next;
            }
            my ($seq, $now, $sent_ns) = split /\t/, $l;
            $out .= "$pid\t$seq\t$b\t" . ($sent_ns // $now) . "\t$now\n";
        }
        return length $out ? $out : undef;
    };
}

# ---------------------------------------------------------------- --connections N > 1

# The slots (Common::start_slots), each a producer of its own: its id on its messages, its
# records ({rec} as $rec above), its transactions, its receipts, its lines.
my @slots;

sub slot_ready {
    my ($s) = @_;
    @$s{qw(rec sent ticked tx_open tx_seq)} = ('', 0, 0, 0, 0);
    # the slots' records share the one producer's budget
    presize(\$s->{rec}, $count * $o->{bursts} * 32, (64 << 20) / $o->{connections})
      unless $duration_ns;
    emit('ready', id => $s->{id}, role => 'producer', tcp_nodelay($s->{stomp}));
}

sub slot_tx_frame {
    my ($s, $command, %extra) = @_;
    $s->{stomp}->send_frame(Net::Stomp::Frame->new({ command => $command,
        headers => { transaction => "bb-$s->{id}-tx-$s->{tx_seq}", %extra } }));
}

# A slot's tick: at most once a second, and only when its total changed (N slots, N lines).
sub slots_tick {
    my ($t) = @_;
    return if $t < $next_tick;
    for my $s (@slots) {
        next if $s->{sent} == $s->{ticked};
        emit('tick', id => $s->{id}, t_ns => $t, sent => $s->{sent});
        $s->{ticked} = $s->{sent};
    }
    $next_tick = $t + 1000000000;
}

# Burst $b on every slot, as send_burst sends it on one connection: message i of every slot in
# turn (the body and its CRC made once for all), then every slot's receipt. Under --rate slot
# k's schedule is shifted by k/(N x R) (k = 0 for the first slot): its message i is due at
# burst_start + (i + k/N)/R, so that the N slots' sends spread over each 1/R instead of leaving
# together. A timed flood (--duration without --rate) ends at the first round whose first
# slot sends at or after the end: every slot sends as many as the first.
sub slots_burst {
    my ($b) = @_;
    my $base = $b * $count;
    my $start = Common::now_ns();
    my $ns_per_msg = $rate > 0 ? 1e9 / $rate : 0;
    my $end = $duration_ns && !$ns_per_msg ? $start + $duration_ns : 0;
    for my $s (@slots) {
        @$s{qw(n confirm)} = (0, 0);
        $s->{rec} .= "=$b\n";
    }
    my ($now, $final);
    ROUND: for my $i (0 .. $count - 1) {
        last if $stop;
        my $seq = $base + $i;
        my $body = $size >= 6 ? sprintf('%06d', $seq % 1000000) . $filler
                              : substr(sprintf('%06d', $seq % 1000000), 0, $size);
        my $crc = sprintf('%08x', Compress::Raw::Zlib::crc32($body));
        $final = $i == $count - 1;
        for my $k (0 .. $#slots) {
            my $s = $slots[$k];
            $Common::SLOT = $s;
            my $sent_ns;
            if ($ns_per_msg) {
                $sent_ns = $start + int(($i + $k / @slots) * $ns_per_msg);
                my $early = $sent_ns - Common::now_ns();
                if ($early > 0) {
                    Time::HiRes::sleep($early / 1e9);
                    last ROUND if $stop;
                }
            }
            $now = Common::now_ns();
            $final = 1 if $end && !$k && $now >= $end;
            my %h = (
                destination => $qdest[$seq % $nd], bb_producer => $s->{id}, bb_seq => $seq,
                bb_burst => $b, bb_sent_ns => $sent_ns // $now, bb_nonce => $nonce,
                bb_crc32 => $crc, bytes_message => 1, body => $body,
            );
            $h{persistent} = 'true' if $persistent;
            if ($txn) {
                unless ($s->{tx_open}) {
                    $s->{tx_seq}++;
                    slot_tx_frame($s, 'BEGIN');
                    $s->{tx_open} = 1;
                }
                $h{transaction} = "bb-$s->{id}-tx-$s->{tx_seq}";
            } elsif ($final) {
                $h{receipt} = "bb-$s->{id}-burst-$b";
                $s->{confirm} = 1;
            }
            $s->{first} = $now unless $s->{n};
            $s->{last} = $now;
            $s->{stomp}->send(\%h);
            $s->{n}++;
            $s->{sent}++;
            $s->{rec} .= $ns_per_msg ? "$seq\t$now\t$sent_ns\n" : "$seq\t$now\n";
            if ($txn && ($s->{n} % $txn == 0 || $final)) {
                slot_tx_frame($s, 'COMMIT', $final ? (receipt => "bb-$s->{id}-burst-$b") : ());
                $s->{confirm} = 1 if $final;
                $s->{tx_open} = 0;
            }
        }
        slots_tick($now) if $now >= $next_tick;
        last if $final;
    }
    for my $s (@slots) {
        next unless $s->{n};
        $s->{unconfirmed} = [$b, $s->{n}, $s->{first}, $s->{last}];
        next unless $s->{confirm};    # stopped mid-burst: the disconnect receipt confirms it
        $Common::SLOT = $s;
        my $got = wait_receipt($s->{stomp}, "bb-$s->{id}-burst-$b", undef, undef, \$stop,
                               sub { slots_tick(Common::now_ns()) });
        slot_print_burst($s) if $got;
    }
}

sub slot_print_burst {
    my ($s) = @_;
    my (undef, $n, $first, $last) = @{ $s->{unconfirmed} };
    emit('burst', id => $s->{id}, burst => $s->{unconfirmed}[0], sent => $n, first_ns => $first,
         last_ns => $last);
    $s->{unconfirmed} = undef;
}

# Stop every slot as finish stops one: commit, disconnect (all at once), the bursts the
# DISCONNECT receipts confirm, then each slot's records and done line.
sub finish_slots {
    for my $s (grep { $_->{tx_open} } @slots) {
        $Common::SLOT = $s;
        slot_tx_frame($s, 'COMMIT');
        $s->{tx_open} = 0;
    }
    Common::disconnect_slots(\@slots, 10);
    for my $s (grep { $_->{unconfirmed} } @slots) {
        $Common::SLOT = $s;
        die "no receipt for DISCONNECT: the last burst is unconfirmed\n" unless $s->{bye};
        slot_print_burst($s);
    }
    for my $s (@slots) {
        $Common::SLOT = $s;
        write_records($s->{records}, $HEADER, contract_lines(\$s->{rec}, $s->{id}));
        emit('done', id => $s->{id}, sent => $s->{sent});
    }
}

# ---------------------------------------------------------------- main

sub finish {
    if ($tx_open) {    # stopped inside a transaction: commit what was sent
        tx_frame('COMMIT');
        $tx_open = 0;
    }
    my $confirmed = graceful_disconnect($stomp, 10);
    if ($unconfirmed) {    # a burst cut short by SIGTERM/stop: the DISCONNECT receipt confirms it
        die "no receipt for DISCONNECT: the last burst is unconfirmed\n" unless $confirmed;
        print_burst($unconfirmed);
    }
    write_records($o->{records}, $HEADER, contract_lines(\$rec, $id));
    emit('done', id => $id, sent => $sent_total);
}

my ($burst, $ticks) = $many ? (\&slots_burst, \&slots_tick) : (\&run_burst, \&tick);
my $rc = eval {
    if ($many) {
        start_slots($o, \$stop, \@slots, \&slot_ready);
        $next_tick = Common::now_ns() + 1000000000;
    } else {
        emit('ready', id => $id, role => 'producer', tcp_nodelay($stomp));
    }
    if ($o->{gate}) {
        my $in = StdinLines->new;
        my $b = 0;
        GATE: while (!$stop) {
            my $wait = ($next_tick - Common::now_ns()) / 1e9;
            $wait = 0.01 if $wait < 0.01;
            for my $l ($in->poll($wait)) {
                if ($l eq 'go') {
                    $burst->($b++);
                    last GATE if $stop;
                } elsif ($l eq 'stop') {
                    last GATE;
                } elsif ($l ne '') {
                    print STDERR "ignoring unknown command '$l'\n";
                }
            }
            last if $in->eof;
            $ticks->(Common::now_ns());
        }
    } else {
        for my $b (0 .. $o->{bursts} - 1) {
            last if $stop;
            $burst->($b);
        }
    }
    $many ? finish_slots() : finish();
    1;
};
unless ($rc) {
    my $err = $@ || 'failed';
    if ($many) {
        # a slot failed (its connection dropped, the broker's ERROR): every slot's records
        # are written all the same, and the error names the slot
        my $failed = $Common::SLOT;
        for my $s (@slots) {
            eval { write_records($s->{records}, $HEADER, contract_lines(\$s->{rec}, $s->{id})) };
        }
        $err = "slot $failed->{id}: $err" if $failed;
    }
    Common::fail(1, $err);
}
exit 0;
