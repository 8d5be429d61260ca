#!/usr/bin/perl
# The stock Perl consumer's own work a message, apart from the broker and the socket:
# listener-cost.pl SIZE [MESSAGES [ROUNDS]]. MESSAGE frames are made as ActiveMQ sends them to a
# Net::Stomp subscriber (its headers, the six bench headers, a body of SIZE bytes: the counter
# digits, then 'x'). Each round hands them once to the loop's per-frame work (as
# perf/loops/perl-recv.pl does a frame: a timestamp, the headers and the body) and once to the
# consumer's own lines for a MESSAGE frame (inline in its receive loop, as the loop's are in its
# own), both read from their sources and compiled here (the code the bench runs), alternating.
# Prints ns a message for each, the median and min-max over the rounds after the first quarter
# (warm-up), and the difference: what the harness adds to a receive.
use strict;
use warnings;
use FindBin;
use Net::Stomp::Frame;
use Time::HiRes qw(gettimeofday time);
use Compress::Raw::Zlib ();

my ($SIZE, $N, $ROUNDS) = @ARGV;
defined $SIZE && $SIZE =~ /^\d+$/ && $SIZE >= 1 or die "usage: $0 SIZE [MESSAGES [ROUNDS]]\n";
$N //= 5000;
$ROUNDS //= 40;

# what the consumer's lines read and write (consumer.pl's file-scope variables of the same names)
my $FILL = $SIZE > 256 ? 'x' x ($SIZE - 6) : undef;
my ($heads, $bodies, $now, $seen, $stop, $target, $mode) = ('', '', 0, 0, 0, 0, 0);
my ($stomp, %pending, $unacked, $ack_every, $txn, $tx_n);
my $one_queue = '/queue/bb-q0';    # one queue, as ./bench perf clients runs the consumer
sub flush_acks { }
sub commit_tx { }

# the code the bench runs, read from its sources: the lines the consumer and the loop run for
# each frame, each in a loop over the frames as in their receive loops
sub source {
    my ($file, $re, $what) = @_;
    my $path = "$FindBin::Bin/../../$file";
    open(my $fh, '<', $path) or die "$path: $!\n";
    my ($code) = do { local $/; <$fh> } =~ $re or die "no $what in $path\n";
    return $code;
}
my $per_message = source('clients/perl/consumer.pl',
                         qr/^ *# per message \(.*?\n(.*?)^ *# end of per message\n/ms,
                         'per-message lines');
my $per_frame = source('perf/loops/perl-recv.pl', qr/^ *# per frame \(.*?\n(.*?)^ *# end of per frame\n/ms,
                       'per-frame lines');
my ($t1, $t0, $tm, $n, $foreign, $skip, $every, @at) = (0, undef, 0, 0, 0, 0, 1000);    # the loop's
eval "sub consumer_frames { for my \$f (\@_) { if (\$f->command eq 'MESSAGE') { $per_message } "
  . "else { die qq(not a MESSAGE\\n) } } } "
  . "sub loop_frames { for my \$f (\@_) { $per_frame } } 1" or die "compiling: $@";

my @frames = map {
    my $body = substr(sprintf('%06d', $_ % 1000000) . 'x' x ($SIZE > 6 ? $SIZE - 6 : 0), 0, $SIZE);
    Net::Stomp::Frame->new({ command => 'MESSAGE', body => $body, headers => {
        'message-id' => "ID:bench-40000-1700000000000-3:1:1:1:$_", destination => '/queue/bb-q0',
        subscription => 'bb-sub-0', redelivered => 'false', priority => '4', persistent => 'false',
        timestamp => '1700000000000', expires => '0', bb_producer => 'p1', bb_seq => "$_",
        bb_burst => '0', bb_sent_ns => '' . (1700000000000000000 + $_),
        bb_nonce => 'n0123456789abcdef', bb_crc32 => '0badf00d' } })
} 0 .. $N - 1;

my %ns;
for my $round (1 .. $ROUNDS) {
    for my $side ('loop', 'consumer') {
        # both strings sized before, as the consumer sizes them before it is ready
        $heads = "\0" x ($N * 140);
        $heads = '';
        $bodies = "\0" x ($N * ($SIZE <= 256 ? $SIZE : 6) + 64);
        $bodies = '';
        my $start = time;
        if ($side eq 'loop') {
            loop_frames(@frames);
        } else {
            consumer_frames(@frames);
        }
        push @{ $ns{$side} }, (time - $start) / $N * 1e9;
    }
}
my $records = ($heads =~ tr/\n//);    # the consumer's record lines of the last round
my $warm = int($ROUNDS / 4);
my @diff = map { $ns{consumer}[$_] - $ns{loop}[$_] } $warm .. $ROUNDS - 1;

sub stats {
    my @s = sort { $a <=> $b } @_;
    my $med = @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
    return sprintf('[%.1f,%.1f,%.1f]', $med, $s[0], $s[-1]);
}
printf qq({"size":%d,"messages":%d,"rounds":%d,"records":%d,"loop_ns":%s,"consumer_ns":%s,)
  . qq("harness_ns":%s}\n), $SIZE, $N, $ROUNDS - $warm, $records, stats(@{ $ns{loop} }[$warm .. $ROUNDS - 1]),
  stats(@{ $ns{consumer} }[$warm .. $ROUNDS - 1]), stats(@diff);
