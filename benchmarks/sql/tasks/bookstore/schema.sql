-- A small bookstore: the database every question of the bookstore task is asked against.
CREATE TABLE authors (id integer PRIMARY KEY, name text NOT NULL, country text NOT NULL, born integer);
CREATE TABLE books (id integer PRIMARY KEY, title text NOT NULL, author_id integer NOT NULL REFERENCES authors(id), genre text NOT NULL, published integer NOT NULL, price numeric(6,2) NOT NULL);
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, city text NOT NULL);
CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers(id), book_id integer NOT NULL REFERENCES books(id), quantity integer NOT NULL, ordered_on date NOT NULL);

INSERT INTO authors VALUES
  (1, 'Ursula K. Le Guin', 'USA', 1929), (2, 'Stanislaw Lem', 'Poland', 1921), (3, 'Chinua Achebe', 'Nigeria', 1930),
  (4, 'Haruki Murakami', 'Japan', 1949), (5, 'Toni Morrison', 'USA', 1931), (6, 'Italo Calvino', 'Italy', 1923);
INSERT INTO books VALUES
  (1, 'A Wizard of Earthsea', 1, 'fantasy', 1968, 9.99), (2, 'The Left Hand of Darkness', 1, 'science fiction', 1969, 12.50),
  (3, 'The Dispossessed', 1, 'science fiction', 1974, 13.00), (4, 'Solaris', 2, 'science fiction', 1961, 11.25),
  (5, 'The Cyberiad', 2, 'science fiction', 1965, 10.00), (6, 'Things Fall Apart', 3, 'literary', 1958, 8.75),
  (7, 'Norwegian Wood', 4, 'literary', 1987, 14.20), (8, 'Kafka on the Shore', 4, 'literary', 2002, 15.80),
  (9, 'Beloved', 5, 'literary', 1987, 13.40), (10, 'Invisible Cities', 6, 'literary', 1972, 10.90),
  (11, 'The Baron in the Trees', 6, 'fantasy', 1957, 9.50);
INSERT INTO customers VALUES
  (1, 'Ada', 'London'), (2, 'Grace', 'New York'), (3, 'Alan', 'London'), (4, 'Edsger', 'Amsterdam'), (5, 'Barbara', 'Boston');
INSERT INTO orders VALUES
  (1, 1, 4, 1, '2024-01-05'), (2, 1, 2, 2, '2024-01-19'), (3, 2, 7, 1, '2024-02-02'), (4, 3, 4, 3, '2024-02-14'),
  (5, 3, 10, 1, '2024-03-01'), (6, 4, 6, 2, '2024-03-11'), (7, 2, 9, 1, '2024-03-30'), (8, 5, 1, 4, '2024-04-08'),
  (9, 1, 8, 1, '2024-04-21'), (10, 4, 4, 1, '2024-05-02');
