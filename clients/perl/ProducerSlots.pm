package ProducerSlots;
# The producer's --connections N > 1 (clients/contract.md, "Many connections in one process"):
# N slots (Slots.pm), each a producer of its own on its connection: its id on its messages, its
# records (a string as producer.pl's $rec), its transactions, its receipts, its lines. One
# thread sends every slot's burst, interleaved.
use strict;
use warnings;
use Compress::Raw::Zlib ();
use Net::Stomp::Frame;
use Common;
use Connect;
use Records;
use Slots;

my ($o, $stop, $count, $duration_ns, $next_tick, @slots);
my ($size, $txn, $rate, $persistent, $nonce, @qdest, $nd, $filler);

# Run the producer of $o's N slots; returns the exit code (0), or exits 1 naming the slot that
# failed (its connection dropped, the broker's ERROR) once every slot's records are written.
sub run {
    ($o) = @_;
    $stop = 0;
    $count = burst_count($o);
    $duration_ns = int($o->{duration} * 1e9);
    ($size, $txn, $rate, $persistent, $nonce) = @$o{qw(size tx-batch rate persistent nonce)};
    @qdest = map { "/queue/$_" } @{ $o->{dests} };
    $nd = @qdest;
    $filler = $size > 6 ? 'x' x ($size - 6) : '';
    my $rc = eval {
        start_slots($o, \$stop, \@slots, \&slot_ready);
        $next_tick = now_ns() + 1000000000;
        run_bursts($o, \$stop, \&slots_burst, \&slots_tick, \$next_tick);
        finish_slots();
        1;
    };
    return 0 if $rc;
    # every slot's records are written all the same, and the error names the slot
    my ($err, $failed) = ($@ || 'failed', $Slots::SLOT);
    eval { write_sent($_->{records}, \$_->{rec}, $_->{id}) } for @slots;
    fail(1, $failed ? "slot $failed->{id}: $err" : $err);
}

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
            $Slots::SLOT = $s;
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
        $Slots::SLOT = $s;
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
        $Slots::SLOT = $s;
        slot_tx_frame($s, 'COMMIT');
        $s->{tx_open} = 0;
    }
    disconnect_slots(\@slots, 10);
    for my $s (grep { $_->{unconfirmed} } @slots) {
        $Slots::SLOT = $s;
        die "no receipt for DISCONNECT: the last burst is unconfirmed\n" unless $s->{bye};
        slot_print_burst($s);
    }
    for my $s (@slots) {
        $Slots::SLOT = $s;
        write_sent($s->{records}, \$s->{rec}, $s->{id});
        emit('done', id => $s->{id}, sent => $s->{sent});
    }
}

1;
