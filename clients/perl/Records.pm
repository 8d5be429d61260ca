package Records;
# The records a client writes when it stops (clients/contract.md, "Records"), made from the
# strings it keeps until then: a producer's send times, a consumer's header values and bodies
# (producer.pl and consumer.pl say what the strings hold and why).
use strict;
use warnings;
use Compress::Raw::Zlib ();
use Exporter 'import';

our @EXPORT = qw(presize write_records write_sent presize_received write_received);

# Empties the string $$ref with memory for $bytes bytes (at most $max, 256 MiB by default)
# that is already touched: fresh memory in the timed messages is page faults, 3-6 µs each on
# the bench's VM, and assigning '' keeps a string's memory.
sub presize {
    my ($ref, $bytes, $max) = @_;
    $max //= 256 << 20;
    $$ref = "\0" x ($bytes < $max ? $bytes : $max);
    $$ref = '';
}

# The records file: the header line, then $data: a string's ref, or a sub that returns the next
# piece of lines and undef at the end.
sub write_records {
    my ($path, $header, $data) = @_;
    return unless defined $path;
    my $failed = "cannot write records to $path";
    open(my $fh, '>', $path) or die "$failed: $!\n";
    print $fh $header, "\n" or die "$failed: $!\n";
    if (ref $data eq 'CODE') {
        while (defined(my $piece = $data->())) { print $fh $piece or die "$failed: $!\n" }
    } else {
        print $fh $$data or die "$failed: $!\n";
    }
    close($fh) or die "$failed: $!\n";
}

# ---------------------------------------------------------------- producer

# A producer's records file from its records string $$rec (producer.pl says its form), of
# producer $pid: the contract's lines made a megabyte at a time.
sub write_sent {
    my ($path, $rec, $pid) = @_;
    write_records($path, "#producer\tseq\tburst\tsent_ns\tactual_ns", _sent_lines($rec, $pid));
}

sub _sent_lines {
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

# ---------------------------------------------------------------- consumer

# The consumer's two strings sized for $messages of $size bytes, a $share of 256 MiB at most.
sub presize_received {
    my ($heads, $bodies, $messages, $share, $size) = @_;
    presize($heads, $messages * 128, (256 << 20) * $share);    # a line is about 100 bytes
    presize($bodies, $messages * ($size <= 256 ? $size : 6), (256 << 20) * $share);
}

my %dname;    # '/queue/x' -> 'x'

sub dest_name {
    my ($d) = @_;
    my $name = $d // '';
    $name =~ s{^/queue/}{};
    $name =~ s/[\t\n]/ /g;
    $dname{ $d // '' } = $name;
    return $name;
}

# What the records need of a body: its length, CRC-32 and first 6 bytes.
sub body_facts { (length $_[0], Compress::Raw::Zlib::crc32($_[0]), substr($_[0], 0, 6)) }

# The records of a consumer $c (the one of the process, or a slot) from its strings
# ${$c->{heads}} and ${$c->{bodies}}, into $c->{rec}, with its counts {received}, {foreign}
# and {redelivered}: a message without the four bench headers (or whose headers do not parse)
# is foreign; body_ok says whether the body starts with the counter's digits.
sub make_records {
    my ($c, $fill, $one_queue) = @_;
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
            ($len, $crc, $b6) = body_facts(substr($$bodies, $pos, 6) . $fill);
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

# The records file of consumer $c (make_records: $fill is the contract's filler after the
# counter of a --size body past 256 bytes, $one_queue the one destination when only one).
sub write_received {
    my ($c, $fill, $one_queue) = @_;
    make_records($c, $fill, $one_queue);
    write_records($c->{records},
        "#producer\tseq\tburst\tsent_ns\trecv_ns\tbytes\tbody_ok\tredelivered\tdest\tnonce"
        . "\tcrc32_header\tcrc32_body", \$c->{rec});
}

1;
