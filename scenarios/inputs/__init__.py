"""Input formats: fio job files (:mod:`.fio`), block traces (:mod:`.traces`) and measurements of real
systems to compare with (:mod:`.measurements`)."""
