#!/usr/bin/perl
# burstbench consumer (Perl, Net::Stomp). The contract: clients/contract.md.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use Common;
use Time::HiRes qw(gettimeofday);
use Compress::Raw::Zlib ();

my $o = parse_args('consumer', @ARGV);
my $id = $o->{id};

my $stop = 0;
my $many = $o->{connections} > 1;    # N slots (below) instead of the one $stomp
my $stomp = $many ? undef : start($o, \$stop);
my $session = $many ? undef : $stomp->session_id;    # --failover: a change means Net::Stomp reconnected

my $ack   = $o->{ack};
my $txn   = $o->{'tx-batch'};
# Acks can only be part of a transaction when they are sent: with --tx-batch, `auto`
# subscribes in `client` mode and acknowledges (cumulatively) inside the transactions.
my $sub_ack = ($txn && $ack eq 'auto') ? 'client' : $ack;
my $mode = $sub_ack eq 'auto' ? 0 : $sub_ack eq 'client' ? 1 : 2;    # 2 = client-individual
my $ack_every = int(($o->{prefetch} + 1) / 2);
my $target = (!$o->{gate} && $o->{count} > 0) ? $o->{count} * $o->{bursts} : 0;

my $seen = 0;                 # bench messages received
my %dname;                    # '/queue/x' -> 'x'
my %pending;                  # client mode: subscription -> last un-acked MESSAGE frame
my $unacked = 0;
my ($tx_open, $tx_n, $tx_seq) = (0, 0, 0);
my $now = 0;

sub dest_name {
    my ($d) = @_;
    my $name = $d // '';
    $name =~ s{^/queue/}{};
    $name =~ s/[\t\n]/ /g;
    $dname{ $d // '' } = $name;
    return $name;
}

sub begin_tx {
    $tx_seq++;
    $stomp->send_frame(Net::Stomp::Frame->new(
        { command => 'BEGIN', headers => { transaction => "bb-$id-tx-$tx_seq" } }));
    $tx_open = 1;
}

# --failover: what was not acknowledged on a dropped connection is the broker's to redeliver;
# acknowledging it on the new one would be an error. Forget it.
sub forget_unacked {
    %pending = ();
    $unacked = 0;
}

sub flush_acks {
    return unless $unacked;
    if ($Common::FAILOVER && !($stomp->socket && defined fileno($stomp->socket)
                               && $stomp->socket->connected)) {
        forget_unacked();
        return;
    }
    begin_tx() if $txn && !$tx_open;
    for my $f (values %pending) {
        $stomp->ack({ frame => $f, ($txn ? (transaction => "bb-$id-tx-$tx_seq") : ()) });
    }
    %pending = ();
    $unacked = 0;
}

sub commit_tx {
    return unless $tx_open;
    $stomp->send_frame(Net::Stomp::Frame->new(
        { command => 'COMMIT', headers => { transaction => "bb-$id-tx-$tx_seq" } }));
    $tx_open = 0;
    $tx_n = 0;
}

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
my $SIZE = $o->{size};
my $FILL = $SIZE > 256 ? 'x' x ($SIZE - 6) : undef;
my $expected = $o->{count} * $o->{bursts};
# With one queue the record line leaves out the destination header (30-60 ns a message,
# perf/micro/listener-cost.pl): a subscription to a queue (no wildcards, no composite names:
# clients/contract.md) gets only that queue's messages, as the Java consumer records them.
my $one_queue = @{ $o->{dests} } == 1 ? "/queue/$o->{dests}[0]" : '';
sub presize_records {
    my ($heads, $bodies, $messages, $share) = @_;
    presize($heads, $messages * 128, (256 << 20) * $share);    # a line is about 100 bytes
    presize($bodies, $messages * ($SIZE <= 256 ? $SIZE : 6), (256 << 20) * $share);
}
presize_records(\$heads, \$bodies, $expected, 1) unless $many;

# What the records need of a body: its length, CRC-32 and first 6 bytes.
sub body_facts { (length $_[0], Compress::Raw::Zlib::crc32($_[0]), substr($_[0], 0, 6)) }

sub other_frame {
    my ($f) = @_;
    if ($f->command eq 'ERROR') {
        my $m = $f->headers->{message} // '';
        # an ack that raced the drop, or a CONNECT that Net::Stomp's reconnect sent on a
        # connection the broker already had connected (ActiveMQ's non-fatal "Already
        # connected."; seen once in a clean-clone CI soak): neither loses anything
        if ($Common::FAILOVER && ($m =~ /\bACK\b/i || $m =~ /^Already connected/i)) {
            print STDERR "ignoring the broker's error after a reconnect: $m\n";
            return;
        }
        die 'broker error: ' . ($f->headers->{message} // '') . ' ' . ($f->body // '') . "\n";
    }
    if ($f->command eq 'CONNECTED' && $Common::FAILOVER) {    # a late one: see reconnected
        $Common::LATE_CONNECTED = $f;
        forget_unacked() if reconnected($stomp, $id, \$session);
    }
    # RECEIPTs and anything else: nothing to do
}

# The records of a consumer $c (the one of the process, or a slot) from its strings
# ${$c->{heads}} and ${$c->{bodies}}, into $c->{rec}, with its counts {received}, {foreign}
# and {redelivered}: a message without the four bench headers (or whose headers do not parse)
# is foreign; body_ok says whether the body starts with the counter's digits.
sub make_records {
    my ($c) = @_;
    no warnings 'uninitialized';    # a missing header makes the line fail the check: foreign
    my ($heads, $bodies) = @$c{qw(heads bodies)};
    my $rec = \($c->{rec} = '');
    my ($received, $foreign, $redelivered) = (0, 0, 0);
    my $pos = 0;
    for my $l (split /\n/, $$heads) {
        my ($len, $crc, $b6);
        # the body's length is the line's last field (a tab inside a header value only adds
        # fields before it): a kept body's bytes (up to 256) follow in $bodies; a checked one's
        # (past 256) first 6 bytes, the filler after them; a summarised one's (negated) CRC-32
        # and first 6 bytes
        my $tab = rindex($l, "\t");
        my $n = substr($l, $tab + 1);
        substr($l, $tab) = '';
        if ($n > 256) {
            ($len, $crc, $b6) = body_facts(substr($$bodies, $pos, 6) . $FILL);
            $pos += 6;
        } elsif ($n >= 0) {
            ($len, $crc, $b6) = body_facts(substr($$bodies, $pos, $n));
            $pos += $n;
        } else {
            ($len, $crc, $b6) = (-$n, unpack('N a6', substr($$bodies, $pos, 10)));
            $pos += 10;
        }
        my ($t, $p, $sq, $bu, $sn, $rd, @rest) = split /\t/, $l, 10;
        my $de = $one_queue || shift @rest;
        my ($nonce, $hcrc, $more) = @rest;
        my $line = "$p\t$sq\t$bu\t$sn";
        unless (!defined $more && defined $hcrc
                && $line =~ /^[A-Za-z0-9_.-]{1,64}\t(\d{1,18})\t\d{1,18}\t\d{1,19}\z/) {
            $foreign++;
            next;
        }
        my $counter = sprintf('%06d', $1 % 1000000);
        my $ok = $b6 ne '' && index($counter, $b6) == 0 ? 1 : 0;
        my $red = $rd eq 'true' ? 1 : 0;
        $redelivered += $red;
        my $dn = $dname{$de} // dest_name($de);
        $nonce = '-' if $nonce eq '';    # absent (the contract's nonce and CRC-32 are never empty)
        $hcrc = '-' if $hcrc eq '';
        $$rec .= sprintf("%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%08x\n",
                         $line, $t, $len, $ok, $red, $dn, $nonce, $hcrc, $crc);
        $received++;
    }
    ($$heads, $$bodies) = ('', '');
    @$c{qw(received foreign redelivered)} = ($received, $foreign, $redelivered);
}

my $stdin = $o->{gate} ? StdinLines->new : undef;
my $wait = { timeout => $stdin ? 0.05 : 0.2 };    # receive_frame's, at most (receive_loop)
my $next_tick = 0;
my $next_check = 0;
my @slots;                    # --connections N > 1 (below)

sub housekeeping {
    my ($t) = @_;
    if ($stdin) {
        for my $l ($stdin->poll(0)) { $stop = 1 if $l eq 'stop' }
        $stop = 1 if $stdin->eof;
    }
    if ($t >= $next_tick) {
        emit('tick', id => $id, t_ns => $t, received => $seen) if $next_tick && !$many;
        slots_tick($t) if $many;
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
                        $pending{ $h->{subscription} // '' } = $f;
                        flush_acks() if ++$unacked >= $ack_every;
                    }
                    if ($txn && ++$tx_n >= $txn) {
                        flush_acks();
                        commit_tx();
                    }
                }
            } else {
                other_frame($f);
            }
            return if $given;
            housekeeping($now) if $now >= $next_check;
        } else {
            unless (defined fileno($stomp->socket)) {
                die "connection to the broker lost\n" unless $Common::FAILOVER;
                forget_unacked();
            }
            housekeeping(Common::now_ns());
        }
        last if $stop;
        $f = $stomp->receive_frame($wait);    # (--failover: reconnects if needed)
        forget_unacked() if $Common::FAILOVER && reconnected($stomp, $id, \$session);
    }
}

sub on_message { receive_loop($_[0]) }

# Subscribe to every destination, the last with a receipt (subscribed awaits it).
sub subscribe_all {
    my ($stomp, $id) = @_;
    my $n = @{ $o->{dests} };
    for my $i (0 .. $n - 1) {
        $stomp->subscribe({
            destination => "/queue/$o->{dests}[$i]", id => "bb-sub-$i", ack => $sub_ack,
            (defined $o->{'window-bytes'} ? ('consumer-window-size' => $o->{'window-bytes'})
                                           : ('activemq.prefetchSize' => $o->{prefetch})),
            ($i == $n - 1 ? (receipt => "bb-$id-subscribed") : ()),
        });
    }
}

# The receipt of subscribe_all, awaited up to --connect-timeout ($on_message gets what arrives
# first); then the ready line.
sub subscribed {
    my ($stomp, $id, $on_message) = @_;
    wait_receipt($stomp, "bb-$id-subscribed", $o->{'connect-timeout'}, $on_message)
      or die "no receipt for SUBSCRIBE\n";
    emit('ready', id => $id, role => 'consumer', tcp_nodelay($stomp));
}

# ---------------------------------------------------------------- --connections N > 1

# The slots (Common::start_slots), each a consumer of its own on its connection: its
# subscriptions, acknowledgements, transactions and records ({heads} and {bodies}, refs to
# strings as $heads and $bodies above), and its lines. One loop serves them all (slots_loop):
# select over their sockets, then each ready slot's frames. They stop together at $target.
my $total = 0;                    # bench messages the slots received together
my $BATCH = 64;                   # frames of one slot in a row, then the others' turn
my $NOW = { timeout => 0 };

sub slot_subscribe {
    my ($s) = @_;
    my ($lines, $kept) = ('', '');    # the slot's $heads and $bodies
    @$s{qw(heads bodies seen ticked pending unacked tx_open tx_n tx_seq served)}
      = (\$lines, \$kept, 0, 0, {}, 0, 0, 0, 0, 0);
    # the slots share the queues' messages: each is sized for its share of them
    my $n = $o->{connections};
    presize_records(\$lines, \$kept, int(($expected + $n - 1) / $n), 1 / $n);
    subscribe_all($s->{stomp}, $s->{id});
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
            slot_flush_acks($s) if ++$s->{unacked} >= $ack_every;
        }
        if ($txn && ++$s->{tx_n} >= $txn) {
            slot_flush_acks($s);
            slot_commit_tx($s);
        }
    }
}

# flush_acks and commit_tx for slot $s (no --failover with slots).
sub slot_flush_acks {
    my ($s) = @_;
    return unless $s->{unacked};
    my $stomp = $s->{stomp};
    if ($txn && !$s->{tx_open}) {
        $s->{tx_seq}++;
        $stomp->send_frame(Net::Stomp::Frame->new(
            { command => 'BEGIN', headers => { transaction => "bb-$s->{id}-tx-$s->{tx_seq}" } }));
        $s->{tx_open} = 1;
    }
    for my $f (values %{ $s->{pending} }) {
        $stomp->ack({ frame => $f, ($txn ? (transaction => "bb-$s->{id}-tx-$s->{tx_seq}") : ()) });
    }
    %{ $s->{pending} } = ();
    $s->{unacked} = 0;
}

sub slot_commit_tx {
    my ($s) = @_;
    return unless $s->{tx_open};
    $s->{stomp}->send_frame(Net::Stomp::Frame->new(
        { command => 'COMMIT', headers => { transaction => "bb-$s->{id}-tx-$s->{tx_seq}" } }));
    @$s{qw(tx_open tx_n)} = (0, 0);
}

# Slot $s's frames, up to $BATCH: whatever its Net::Stomp object holds in its buffer, then
# what its socket has, without waiting. Returns true when it stopped at $BATCH (more may be
# there: serve it again before waiting), false when it has no whole frame left.
sub slot_frames {
    my ($s) = @_;
    $Common::SLOT = $s;
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
        $Common::SLOT = $s;
        subscribed($s->{stomp}, $s->{id}, sub { slot_message($s, $_[0]) });
    }
    $next_tick = Common::now_ns() + 1000000000;
    slots_loop();
    # stop as run_one does, every slot: acknowledgements, then the DISCONNECTs (all at once)
    if ($mode) {
        for my $s (@slots) {
            $Common::SLOT = $s;
            slot_flush_acks($s) if $mode == 1;
            slot_commit_tx($s);
        }
    }
    disconnect_slots(\@slots, 10, $mode ? undef : \&slot_message);
    for my $s (@slots) {
        $Common::SLOT = $s;
        save_records($s);
        emit('done', id => $s->{id}, received => $s->{received}, foreign => $s->{foreign},
             redelivered => $s->{redelivered});
    }
}

# ---------------------------------------------------------------- main

# the one consumer of the process (--connections 1), as make_records and save_records see it
my $one = { id => $id, records => $o->{records}, heads => \$heads, bodies => \$bodies };

sub run_one {
    subscribe_all($stomp, $id);
    subscribed($stomp, $id, \&on_message);
    $next_tick = Common::now_ns() + 1000000000;

    receive_loop();

    # Stop: acknowledge what we hold, then DISCONNECT with a receipt. Meanwhile, messages the
    # broker already auto-acknowledged are kept; un-acked ones (client modes) are left to be
    # redelivered to others.
    if ($mode) {
        flush_acks() if $mode == 1;
        commit_tx();
    }
    graceful_disconnect($stomp, 10, $mode ? undef : \&on_message);
    save_records($one);
    emit('done', id => $id, received => $one->{received}, foreign => $one->{foreign},
         redelivered => $one->{redelivered});
}

my $rc = eval { $many ? run_slots() : run_one(); 1 };
unless ($rc) {
    # a dropped connection (without --failover) or the broker's ERROR: what was received is
    # still written, as every client does (every slot's), then exit 1 naming the slot
    my $err = $@ || 'failed';
    my $failed = $Common::SLOT;
    eval { save_records($_) } for $many ? @slots : ($one);
    $err = "slot $failed->{id}: $err" if $many && $failed;
    Common::fail(1, $err);
}
exit 0;

sub save_records {
    my ($c) = @_;
    make_records($c);
    write_records($c->{records},
        "#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\tnonce"
        . "\tcrc32_header\tcrc32_body", \$c->{rec});
}
