# Chart of bench/report: ns per packed call, one cluster per signature, one bar per call path.
# gnuplot -e "datafile='...'; outfile='...'" bench/performance.gp
set terminal svg size 1100,460 dynamic font "sans,12" background rgb "white"
set output outfile
set title "ffijit: ns per call (median, lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left
set ylabel "ns per call"
set yrange [0:*]
set grid ytics
set xtics noenhanced
set datafile missing "NaN"
plot datafile using 2:xtic(1) title columnheader(2), \
     '' using 3 title columnheader(3), \
     '' using 4 title columnheader(4), \
     '' using 5 title columnheader(5), \
     '' using 6 title columnheader(6), \
     '' using 7 title columnheader(7), \
     '' using 8 title columnheader(8), \
     '' using 9 title columnheader(9), \
     '' using 10 title columnheader(10), \
     '' using 11 title columnheader(11)
