from collector.entry import main

main()
