#!/usr/bin/perl
# The stock Perl consumer's own work a message, apart from the broker and the socket:
# listener-cost.pl SIZE [MESSAGES [ROUNDS]]. MESSAGE frames are made as ActiveMQ sends them to a
# Net::Stomp subscriber (its headers, the six bench headers, a body of SIZE bytes: the counter
# digits, then 'x'). Each round hands them once to the loop's receive loop (perf/loops/perl-recv.pl:
# a timestamp, the headers and the body) and once to the consumer's (receive_loop in
# clients/perl/consumer.pl), both read from their sources and compiled here (the code the bench
# runs), alternating. Each reads its frames from a connection that hands out the made ones, so
# what a loop does a frame besides its message (its tests, its reads) counts too. Prints ns a
# message for each, the median and min-max over the rounds after the first quarter (warm-up), and
# the difference: what the harness adds to a receive.
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

# what the consumer's receive loop reads and writes (consumer.pl's file-scope variables of the
# same names), the one queue as ./bench perf clients runs it, auto acknowledgement
my $FILL = $SIZE > 256 ? 'x' x ($SIZE - 6) : undef;
my ($heads, $bodies, $now, $seen, $stop, $target, $mode) = ('', '', 0, 0, 0, 0, 0);
my $next_check = 9e18;    # housekeeping (stdin, ticks) is not the message's work: never due
my ($id, $session, $ack_every, $txn) = ('c1');
my $one = { pending => {}, unacked => 0, tx_n => 0 };    # (acknowledgements: none in auto mode)
my $one_queue = '/queue/bb-q0';
my $wait = { timeout => 0.2 };
sub housekeeping { }
sub other_frame { die "not a MESSAGE\n" }
{ no warnings 'once'; $Failover::ON = 0; }
sub Common::now_ns { 0 }

# the connection both loops read: it hands out a round's frames, then none
{
    package Frames;
    sub new { my ($c, $frames) = @_; return bless { frames => $frames, i => 0 }, $c }
    sub receive_frame { my $s = shift; return $s->{frames}[ $s->{i}++ ] }
    sub socket { return \*STDIN }
}
my $stomp;

# the code the bench runs, read from its sources: the consumer's receive loop (a sub) and the
# loop's (its while loop, made a sub here)
sub source {
    my ($file, $re, $what) = @_;
    my $path = "$FindBin::Bin/../../$file";
    open(my $fh, '<', $path) or die "$path: $!\n";
    my ($code) = do { local $/; <$fh> } =~ $re or die "no $what in $path\n";
    return $code;
}
my $consumer_loop = source('clients/perl/consumer.pl', qr/^(sub receive_loop \{\n.*?^\}\n)/ms,
                           'receive loop');
my $loop_loop = source('perf/loops/perl-recv.pl', qr/^(while \(\$n < \$count\) \{\n.*?^\}\n)/ms,
                       'receive loop');
my ($n, $count, $t1, $t0, $tm, $foreign, $skip, $every, @at);    # the loop's
eval "$consumer_loop; sub loop_frames { $loop_loop } 1" or die "compiling: $@";

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
        $stomp = Frames->new(\@frames);
        ($n, $count, $t0, $foreign, $skip, $every, @at) = (0, $N, undef, 0, 0, 1000);
        ($seen, $target, $stop) = (0, $N, 0);
        my $start = time;
        if ($side eq 'loop') {
            loop_frames();
        } else {
            receive_loop();
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
